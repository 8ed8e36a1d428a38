// A suite that compares servers and precisions (validation/dell-mlperf): the study's other
// machines, a network's FP32 twin, its total batch, each network's dataset as its epoch; the
// metrics gain_pct, precision_speedup and epoch_min against their closed forms; the claim kinds
// machine_gain, precision_speedup and scaling_efficiency on hand-made predictions; and each
// mistake one error at its line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/test_support.hpp"
#include "tests/validation/tiny_suite.hpp"
#include "validation/src/claims.hpp"
#include "validation/src/suite.hpp"

namespace gpuscale::validation {
namespace {

using gpuscale::testing::config_error_of;
using ::testing::HasSubstr;
using testing::load_error_at;
using testing::tiny_suite_files;
using testing::write_suite;

// The tiny suite with a second machine (a DGX-1 with P100s, 1 and 2 GPUs, LeNet only), ResNet's
// FP32 twin run in FP16 (ResNet16, `twin_of`: the FP32 network is its twin), and a table of each
// new metric.
std::map<std::string, std::string> machine_suite_files() {
  auto files = tiny_suite_files();
  std::string& suite = files.at("suite.yaml");
  auto replace = [&suite](const std::string& from, const std::string& to) {
    const auto at = suite.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    suite.replace(at, from.size(), to);
  };
  replace("methods: {P2P: p2p, NCCL: nccl_reduce_bcast}\n",
          "machines:\n"
          "  P100: {topology: dgx1-p100, gpus: [1, 2], gpu_memory: 16 GB, networks: [LeNet]}\n"
          "methods: {P2P: p2p, NCCL: nccl_reduce_bcast}\n");
  replace("networks: {LeNet: lenet, ResNet: resnet-50}\n",
          "networks:\n"
          "  LeNet: lenet\n"
          "  ResNet: resnet-50\n"
          "  ResNet16: {workload: resnet-50, precision: fp16}\n");
  replace("tables: [speedup.yaml]", "tables: [speedup.yaml, gain.yaml, precision.yaml]");
  files["gain.yaml"] =
      "id: gain\n"
      "title: \"V100 over P100\"\n"
      "metric: gain_pct\n"
      "relative_to_machine: P100\n"
      "points:\n"
      "  - {network: LeNet, method: P2P, gpus: 2, batch: 16, scaling: strong, measured: 50}\n"
      "bounds:\n"
      "  - {network: LeNet, method: P2P, gpus: 1, batch: 16, scaling: strong, above: 0, "
      "below: 100}\n";
  files["precision.yaml"] =
      "id: precision\n"
      "title: \"FP16 over FP32\"\n"
      "metric: precision_speedup\n"
      "points:\n"
      "  - {network: ResNet16, method: NCCL, gpus: 8, batch: 32, scaling: strong, measured: 2}\n";
  return files;
}

// ResNet16 is a workload of another precision than the setup's only by its own `precision` key;
// the loader checks its twin in check_twins (the workload file's precision is checked by predict).
std::string machine_suite(const std::string& file = "", const std::string& from = "",
                          const std::string& to = "") {
  auto files = machine_suite_files();
  std::string& suite = files.at("suite.yaml");
  const auto twin = suite.find("  ResNet: resnet-50\n");
  suite.replace(twin, std::string("  ResNet: resnet-50\n").size(),
                "  ResNet: {workload: resnet-50, twin_of: ResNet16}\n");
  if (!file.empty()) {
    const auto at = files.at(file).find(from);
    EXPECT_NE(at, std::string::npos) << from;
    files[file].replace(at, from.size(), to);
  }
  return write_suite(files);
}

TEST(SuiteMachines, LoadsMachinesTwinsAndTheNewMetrics) {
  const Suite s = load_suite(machine_suite());
  ASSERT_EQ(s.setup.machines.size(), 1u);
  EXPECT_EQ(s.setup.machine("P100").topology, "dgx1-p100");
  EXPECT_EQ(s.setup.machine("").topology, "dgx1-v100");
  EXPECT_EQ(s.twin("ResNet16"), "ResNet");
  EXPECT_EQ(s.precision_of("ResNet16"), "fp16");
  EXPECT_EQ(s.precision_of("ResNet"), "fp32");
  const Table& gain = s.tables.at(1);
  EXPECT_EQ(gain.relative_to_machine, "P100");
  EXPECT_EQ(gain.bounds.at(0).above, 0);
  EXPECT_TRUE(gain.bounds.at(0).holds(50));
  EXPECT_FALSE(gain.bounds.at(0).holds(100));
  EXPECT_FALSE(gain.bounds.at(0).holds(0));
}

TEST(SuiteMachines, EachMistakeIsOneErrorAtItsLine) {
  // A GPU count the machine the gain is measured against does not run.
  EXPECT_THAT(load_error_at(machine_suite("gain.yaml", "gpus: 2, batch: 16, scaling: strong, measured",
                                     "gpus: 4, batch: 16, scaling: strong, measured"),
                       "gain.yaml", 6),
              HasSubstr("GPU count 4 is not one machine P100 runs (its gpus: 1, 2)"));
  // A network the other machine does not run.
  EXPECT_THAT(load_error_at(machine_suite("gain.yaml", "network: LeNet, method: P2P, gpus: 2",
                                     "network: ResNet, method: P2P, gpus: 2"),
                       "gain.yaml", 6),
              HasSubstr("network ResNet does not run on machine P100"));
  EXPECT_THAT(load_error_at(machine_suite("gain.yaml", "relative_to_machine: P100",
                                     "relative_to_machine: P10"),
                       "gain.yaml", 4),
              HasSubstr("unknown machine 'P10'"));
  EXPECT_THAT(load_error_at(machine_suite("gain.yaml", "above: 0", "above: 100"), "gain.yaml", 8),
              HasSubstr("above (100) must be less than below (100)"));
  // A precision speedup of a network no other network twins.
  EXPECT_THAT(load_error_at(machine_suite("precision.yaml", "network: ResNet16", "network: LeNet"),
                       "precision.yaml", 5),
              HasSubstr("no network is LeNet in another precision"));
  EXPECT_THAT(load_error_at(machine_suite("suite.yaml", "twin_of: ResNet16", "twin_of: LeNet"),
                       "suite.yaml", 20),
              HasSubstr("which trains in the same precision"));
  EXPECT_THAT(load_error_at(machine_suite("suite.yaml", "gpu_memory: 16 GB, networks",
                                     "gpu_memory: -16 GB, networks"),
                       "suite.yaml", 16),
              HasSubstr("gpu_memory"));
  // A total batch that does not split over one of a machine's GPU counts.
  auto files = machine_suite_files();
  std::string& suite = files.at("suite.yaml");
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"gpus: [1, 2], gpu_memory", "gpus: [1, 3], gpu_memory"},
        {"  LeNet: lenet\n", "  LeNet: {workload: lenet, batch_per: total}\n"}}) {
    suite.replace(suite.find(from), from.size(), to);
  }
  EXPECT_THAT(load_error_at(write_suite(files), "suite.yaml", 19),
              HasSubstr("network LeNet's total batch of 16 does not split over 3 GPUs of machine "
                        "P100"));
}

// Predictions by hand: an iteration of 10 ms on the setup's machine, 15 ms on the P100, and 25 ms
// for the FP32 twin; every run's epoch is its iterations only; its two steady iterations
// allreduce 66, 66, 40 and 10 MB, then 66, 66 and 10 MB.
Metrics hand_metrics(const Suite& suite) {
  Predictions p;
  for (const NameMapping& n : suite.networks) {
    for (const NameMapping& m : suite.methods) {
      for (int b : suite.setup.batches) {
        for (int g : suite.setup.gpus) {
          const double s = n.study == "ResNet" ? 0.025 : 0.010;
          p.runs[{n.study, m.study, g, b}] =
              PredictedRun{s, 0, s, 0, 1, 1, 1, 1, {{66e6, 66e6, 40e6, 10e6}, {66e6, 66e6, 10e6}}};
        }
        for (int g : {1, 2}) p.runs[{n.study, m.study, g, b, "P100"}] =
            PredictedRun{0.015, 0, 0.015, 0, 1, 1, 1, 1, {}};
      }
    }
    p.strong_images[n.study] = suite.setup.strong_images;
  }
  return Metrics(suite, p);
}

TEST(SuiteMachines, NewMetricsMatchTheirClosedForms) {
  const Suite s = load_suite(machine_suite());
  const Metrics m = hand_metrics(s);
  const RunKey lenet{"LeNet", "P2P", 2, 16};
  // 256,000 images / (2 x 16) = 8,000 iterations of 10 ms: 80 s, 1.333 min.
  EXPECT_NEAR(m.epoch_s(lenet), 80, 1e-9);
  EXPECT_NEAR(m.predicted(s.tables.at(1), s.tables.at(1).points.at(0)), 50, 1e-9);
  EXPECT_NEAR(m.gain_pct(lenet, "P100"), 100 * (0.015 / 0.010 - 1), 1e-9);
  EXPECT_NEAR(m.precision_speedup({"ResNet16", "NCCL", 8, 32}), 2.5, 1e-12);
  Table minutes;
  minutes.metric = Metric::EpochMin;
  StudyRun run;
  run.network = "LeNet", run.method = "P2P", run.gpus = 2, run.batch = 16;
  EXPECT_NEAR(m.predicted(minutes, run), 80.0 / 60, 1e-12);
}

// A claim of `kind` with `params` (YAML), loaded into the machine suite and evaluated on the
// hand-made predictions.
ClaimResult evaluate_claim_text(const std::string& kind, const std::string& params) {
  auto files = machine_suite_files();
  files.at("suite.yaml").replace(files.at("suite.yaml").find("  ResNet: resnet-50\n"),
                                 std::string("  ResNet: resnet-50\n").size(),
                                 "  ResNet: {workload: resnet-50, twin_of: ResNet16}\n");
  files["claims.yaml"] =
      "claims:\n  - id: c\n    kind: " + kind + "\n    text: t\n    params: " + params + "\n";
  const Suite s = load_suite(write_suite(files));
  return evaluate_claim(s.claims.at(0), hand_metrics(s));
}

TEST(SuiteMachines, ClaimsAboutServersPrecisionsAndScaling) {
  // The V100 is 50% faster than the P100 on LeNet, for both methods.
  const ClaimResult gain = evaluate_claim_text(
      "machine_gain", "{networks: [LeNet], baseline_machines: [P100], gpus: [1, 2], "
                      "at_least_pct: 45, at_most_pct: 55}");
  EXPECT_EQ(gain.holds, true);
  ASSERT_EQ(gain.checks.size(), 4u);
  EXPECT_NEAR(gain.checks.at(0).value, 50, 1e-9);
  EXPECT_EQ(evaluate_claim_text("machine_gain", "{networks: [LeNet], baseline_machines: [P100], "
                                                "gpus: [2], max_at_least_pct: 60}")
                .holds,
            false);
  // Each network at its default batch (16, the setup's first): 2.5x for ResNet16.
  const ClaimResult precision = evaluate_claim_text(
      "precision_speedup", "{networks: [ResNet16], gpus: [8], at_least: 2, at_most: 3}");
  EXPECT_EQ(precision.holds, true);
  EXPECT_NEAR(precision.checks.at(0).value, 2.5, 1e-12);
  // Perfect scaling on the hand-made predictions: 100% on the P100's 2 GPUs.
  const ClaimResult scaling = evaluate_claim_text(
      "scaling_efficiency", "{networks: [LeNet], machine: P100, gpus: [2], above_pct: 99}");
  EXPECT_EQ(scaling.holds, true);
  EXPECT_NEAR(scaling.checks.at(0).value, 100, 1e-9);
  EXPECT_EQ(evaluate_claim_text("scaling_efficiency",
                                "{networks: [LeNet], machine: P100, gpus: [2], above_pct: 100}")
                .holds,
            false);
  // A GPU count the claim's machine does not run is refused at load.
  EXPECT_THAT(config_error_of([] {
                evaluate_claim_text("scaling_efficiency",
                                    "{networks: [LeNet], machine: P100, gpus: [8], above_pct: 80}");
              }),
              HasSubstr("GPU count 8 is not one machine P100 runs"));
}

// message_sizes: the share of the steady iterations' allreduces, by count, whose size lies within
// (lo, hi]: 66 MB is 62.9 MiB, 40 MB 38.1 MiB, 10 MB 9.5 MiB; 5 of 7 lie in (32, 64] MiB.
TEST(SuiteMachines, MessageSizesCountTheAllreducesWithinTheirRange) {
  const std::string run = "{networks: [LeNet], methods: [NCCL], gpus: [2], ";
  const ClaimResult most =
      evaluate_claim_text("message_sizes", run + "message_sizes: [32 MiB, 64 MiB], above_pct: 50}");
  EXPECT_EQ(most.holds, true);
  ASSERT_EQ(most.checks.size(), 1u);
  EXPECT_NEAR(most.checks.at(0).value, 500.0 / 7, 1e-12);
  EXPECT_THAT(most.checks.at(0).what,
              HasSubstr("5 of 7 allreduces (2 iterations) in (32, 64] MiB"));
  // "More than": five of seven is not more than 5/7.
  EXPECT_EQ(evaluate_claim_text("message_sizes",
                                run + "message_sizes: [32 MiB, 64 MiB], above_pct: 71.4285714286}")
                .holds,
            false);
  // The range is open below and closed above: 66 MB lies above 62 MiB, 40 MB not below 38 MiB.
  EXPECT_NEAR(
      evaluate_claim_text("message_sizes", run + "message_sizes: [38 MiB, 62 MiB], above_pct: 0}")
          .checks.at(0)
          .value,
      100.0 / 7, 1e-12);
  EXPECT_THAT(config_error_of([&] {
                evaluate_claim_text("message_sizes",
                                    run + "message_sizes: [64 MiB, 32 MiB], above_pct: 50}");
              }),
              HasSubstr("message_sizes: the first size must be below the second"));
  EXPECT_THAT(config_error_of([&] {
                evaluate_claim_text("message_sizes", run + "message_sizes: 64 MiB, above_pct: 50}");
              }),
              HasSubstr("message_sizes is a range of two sizes"));
}

}  // namespace
}  // namespace gpuscale::validation
