// Suites that compare methods across GPU counts (validation/lassen-spatial): a method that splits
// each sample over a group of GPUs, networks that ran with some methods and batches only, and
// the claim kinds method_speedup (at the same global mini-batch) and fits_memory, each holding
// and failing on predictions made by hand; the loader's errors for runs the suite does not
// simulate; and one small simulation that predicts each method with its own split.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/test_support.hpp"
#include "tests/validation/tiny_suite.hpp"
#include "validation/src/claims.hpp"
#include "validation/src/predictions.hpp"

namespace gpuscale::validation {
namespace {

using gpuscale::testing::config_error_of;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::RunModel;

// Sample and Tree run whole samples; Spatial splits each over 2 GPUs. Mesh ran at batch 1 with
// Sample and Spatial only; ResNet with every method at every batch.
std::map<std::string, std::string> spatial_suite_files() {
  return {{"suite.yaml",
           "name: spatial\n"
           "title: \"a spatial suite\"\n"
           "setup:\n"
           "  topology: lassen\n"
           "  framework: pytorch-horovod\n"
           "  gpus: [1, 2, 4, 8]\n"
           "  batches: [1, 4]\n"
           "  batch_per: gpu\n"
           "  epochs: 1\n"
           "  dataset: [imagenet, synthetic]\n"
           "  data: synthetic\n"
           "  strong_images: 1024\n"
           "  weak_images_per_gpu: 1024\n"
           "  precision: fp32\n"
           "  gpu_memory: 16 GB\n"
           "  alternatives:\n"
           "    - {id: with-input, data: dataset, why: w}\n"
           "methods: {Sample: nccl, Spatial: {comm: nccl, spatial: 2}, Tree: nccl_tree}\n"
           "networks:\n"
           "  Mesh: {workload: mesh-tangling, methods: [Sample, Spatial], batches: [1]}\n"
           "  ResNet: resnet-50\n"
           "claims: claims.yaml\n"},
          {"claims.yaml",
           "claims:\n"
           "  - id: spatial-at-least-2x\n"
           "    kind: method_speedup\n"
           "    text: t\n"
           "    params: {networks: [Mesh], method: Spatial, baseline: Sample, mini_batches: [1, 2, "
           "4], batch: 1, at_least: 2}\n"
           "  - id: spatial-over-2x\n"
           "    kind: method_speedup\n"
           "    text: t\n"
           "    params: {networks: [Mesh], method: Spatial, baseline: Sample, mini_batches: [4], "
           "batch: 1, at_least: 2, strict: true}\n"
           "  - id: tree-like-ring\n"
           "    kind: method_speedup\n"
           "    text: t\n"
           "    params: {networks: [ResNet], method: Tree, baseline: Sample, mini_batches: [8, "
           "32], batch: 4, within_pct: 5}\n"
           "  - id: spatial-less-at-largest\n"
           "    kind: method_speedup\n"
           "    text: t\n"
           "    params: {networks: [Mesh], method: Spatial, baseline: Sample, from_mini_batch: 1, "
           "to_mini_batch: 4, batch: 1, decreasing: true}\n"
           "  - id: sample-does-not-fit\n"
           "    kind: fits_memory\n"
           "    text: t\n"
           "    params: {networks: [Mesh], methods: [Sample], gpus: [1, 2], batch: 1, fits: "
           "false}\n"
           "  - id: spatial-fits\n"
           "    kind: fits_memory\n"
           "    text: t\n"
           "    params: {networks: [Mesh], methods: [Spatial], gpus: [2, 8], batch: 1, fits: "
           "true}\n"}};
}

const Suite& suite() {
  static const Suite s = load_suite(testing::write_suite(spatial_suite_files()));
  return s;
}

std::optional<bool> holds(const std::string& id, const RunModel& run) {
  for (const Claim& c : suite().claims) {
    if (c.id == id) return evaluate_claim(c, testing::metrics_of(suite(), run)).holds;
  }
  ADD_FAILURE() << "no claim " << id;
  return std::nullopt;
}

// 10 ms per iteration whole; a split sample `speedup(G)` times faster on G > 1 GPUs; memory 20 GB
// per GPU whole, `split_gb` split.
RunModel split_runs(const std::function<double(int)>& speedup, double split_gb = 6) {
  return [speedup, split_gb](const RunKey& k) {
    PredictedRun r{0.010, 0, 0.009, 0.001, 1.0, 20.0, 20.0, 1, {}};
    if (k.method == "Spatial" && k.gpus > 1) {
      r.spatial_ways = 2;
      r.iteration_s /= speedup(k.gpus);
      r.memory_gpu0_gb = r.memory_gpux_gb = split_gb;
    }
    return r;
  };
}

RunModel split_by(double speedup) {
  return split_runs([speedup](int) { return speedup; });
}

TEST(SpatialSuite, LoadsMethodsWithTheirSplitAndNetworksWithTheirRuns) {
  const Suite& s = suite();
  EXPECT_EQ(s.spatial_of("Spatial"), 2);
  EXPECT_EQ(s.spatial_of("Sample"), 1);
  EXPECT_EQ(s.comm_of("Spatial"), "nccl");
  EXPECT_EQ(s.methods_of("Mesh"), (std::vector<std::string>{"Sample", "Spatial"}));
  EXPECT_EQ(s.batches_of("Mesh"), (std::vector<int>{1}));
  EXPECT_EQ(s.methods_of("ResNet"), (std::vector<std::string>{"Sample", "Spatial", "Tree"}));
  EXPECT_EQ(s.batches_of("ResNet"), (std::vector<int>{1, 4}));
  EXPECT_EQ(s.setup.datasets, (std::vector<std::string>{"imagenet", "synthetic"}));
  EXPECT_TRUE(s.tables.empty());  // a suite of claims only
  ASSERT_EQ(s.claims.size(), 6u);
  EXPECT_EQ(s.claims[0].params.method_spatial, 2);
  EXPECT_EQ(s.claims[0].params.baseline_spatial, 1);
  // The reading that feeds the dataset through the input pipeline.
  EXPECT_TRUE(s.setup.synthetic_data);
  EXPECT_FALSE(s.read_as(s.setup.alternatives.at(0)).setup.synthetic_data);
}

TEST(SpatialSuite, ASplitSampleTrainsOneSamplePerGroupAndIteration) {
  const Metrics m = testing::metrics_of(suite(), split_by(1));
  // 2 GPUs sharing each sample at batch 1 train one sample an iteration: 1024 iterations.
  EXPECT_DOUBLE_EQ(m.epoch_s({"Mesh", "Spatial", 2, 1}), 0.010 * 1024);
  EXPECT_DOUBLE_EQ(m.epoch_s({"Mesh", "Sample", 2, 1}), 0.010 * 512);
  EXPECT_DOUBLE_EQ(m.images_per_s({"Mesh", "Spatial", 8, 1}), 4 / 0.010);
}

TEST(SpatialClaims, MethodSpeedupAtLeast) {
  EXPECT_EQ(holds("spatial-at-least-2x", split_by(2.5)), true);
  EXPECT_EQ(holds("spatial-at-least-2x", split_by(2)), true);  // at least 2: 2 holds
  EXPECT_EQ(holds("spatial-at-least-2x", split_by(1.5)), false);
  // The same runs twice the GPUs, so with no split speedup the mini-batch's epoch is the same.
  const ClaimResult same =
      evaluate_claim(suite().claims[0], testing::metrics_of(suite(), split_by(1)));
  ASSERT_EQ(same.checks.size(), 3u);
  EXPECT_DOUBLE_EQ(same.checks[2].value, 1);
  EXPECT_THAT(same.checks[2].what, StartsWith("Mesh mini-batch 4 (Spatial on 8 GPUs, Sample on 4"));
}

TEST(SpatialClaims, MethodSpeedupOverIsStrict) {
  EXPECT_EQ(holds("spatial-over-2x", split_by(2.5)), true);
  EXPECT_EQ(holds("spatial-over-2x", split_by(2)), false);  // over 2: 2 is not
}

TEST(SpatialClaims, MethodSpeedupWithin) {
  EXPECT_EQ(holds("tree-like-ring", split_by(1)), true);
  EXPECT_EQ(holds("tree-like-ring", [](const RunKey& k) {
              PredictedRun r = split_by(1)(k);
              if (k.method == "Tree" && k.gpus == 8) r.iteration_s *= 1.1;
              return r;
            }),
            false);
}

TEST(SpatialClaims, MethodSpeedupFallsFromOneMiniBatchToAnother) {
  // Spatial on 8 GPUs (mini-batch 4) gains less than on 2 (mini-batch 1).
  EXPECT_EQ(holds("spatial-less-at-largest",
                  split_runs([](int gpus) { return gpus == 8 ? 2.2 : 2.5; })),
            true);
  EXPECT_EQ(holds("spatial-less-at-largest", split_by(2.5)), false);  // the same is not less
}

TEST(SpatialClaims, FitsMemory) {
  EXPECT_EQ(holds("sample-does-not-fit", split_by(2)), true);  // 20 GB > 16 GB
  EXPECT_EQ(holds("spatial-fits", split_by(2)), true);         // 6 GB
  EXPECT_EQ(holds("spatial-fits", split_runs([](int) { return 2.0; }, 17)), false);
  EXPECT_EQ(holds("sample-does-not-fit", [](const RunKey& k) {
              PredictedRun r = split_by(2)(k);
              r.memory_gpu0_gb = r.memory_gpux_gb = 16;  // exactly full still fits
              return r;
            }),
            false);
}

// `from` replaced by `to` in `file` of the spatial suite; the error of loading it, checked to
// start at `file`:`line`.
std::string error_with(const std::string& file, const std::string& from, const std::string& to,
                       int line) {
  auto files = spatial_suite_files();
  const auto at = files.at(file).find(from);
  EXPECT_NE(at, std::string::npos) << from;
  files[file].replace(at, from.size(), to);
  const std::string dir = testing::write_suite(files);
  const std::string message = config_error_of([&] { load_suite(dir); });
  EXPECT_THAT(message, StartsWith(dir + "/" + file + ":" + std::to_string(line) + ": "))
      << message;
  return message;
}

TEST(SpatialSuiteErrors, AMiniBatchOnAGpuCountTheSetupDoesNotRun) {
  EXPECT_THAT(error_with("claims.yaml", "mini_batches: [4], batch: 1",
                         "mini_batches: [8], batch: 1", 9),
              HasSubstr("a mini-batch of 8 at batch 1 puts Spatial (2 GPUs per sample) on 16 "
                        "GPUs, not a count the setup runs (setup.gpus: 1, 2, 4, 8)"));
  EXPECT_THAT(error_with("claims.yaml", "mini_batches: [8, 32], batch: 4",
                         "mini_batches: [6], batch: 4", 13),
              HasSubstr("puts Tree (1 GPU per sample) on 1.5 GPUs"));
}

TEST(SpatialSuiteErrors, AClaimOnRunsANetworkDidNotRun) {
  EXPECT_THAT(error_with("claims.yaml", "methods: [Spatial], gpus: [2, 8], batch: 1",
                         "methods: [Tree], gpus: [2, 8], batch: 1", 25),
              HasSubstr("network Mesh ran with Sample, Spatial only, not Tree"));
  EXPECT_THAT(error_with("claims.yaml", "methods: [Spatial], gpus: [2, 8], batch: 1",
                         "methods: [Spatial], gpus: [2, 8], batch: 4", 25),
              HasSubstr("network Mesh ran at batch 1 only, not 4"));
}

TEST(SpatialSuiteErrors, GroupsThatDoNotForm) {
  EXPECT_THAT(error_with("suite.yaml", "gpus: [1, 2, 4, 8]", "gpus: [1, 2, 3, 4, 8]", 18),
              HasSubstr("method Spatial splits each sample over 2 GPUs, but setup.gpus has 3"));
  EXPECT_THAT(error_with("suite.yaml", "{comm: nccl, spatial: 2}", "{comm: nccl, spatail: 2}", 18),
              HasSubstr("unknown key 'spatail'"));
}

TEST(SpatialSuiteErrors, AtLeastIsOneValueForAMethodSpeedup) {
  EXPECT_THAT(error_with("claims.yaml", "batch: 1, at_least: 2}", "batch: 1, at_least: {2: 2}}",
                         5),
              HasSubstr("at_least of a method_speedup is one value"));
}

// Mesh with both methods, the 2048x2048 mesh with the split only: four runs of each method
// where it ran, and a split only where the method splits and there is more than one GPU.
TEST(SpatialPredictions, EachMethodRunsWithItsOwnSplit) {
  const std::string dir = testing::write_suite(
      {{"suite.yaml",
        "name: spatial-run\n"
        "title: t\n"
        "setup: {topology: lassen, framework: pytorch-horovod, gpus: [1, 4], batches: [1], "
        "batch_per: gpu, epochs: 1, dataset: synthetic, data: synthetic, strong_images: 64, "
        "weak_images_per_gpu: 64, precision: fp32, gpu_memory: 16 GB}\n"
        "methods: {Sample: nccl, Spatial: {comm: nccl, spatial: 4}}\n"
        "networks:\n"
        "  Mesh: mesh-tangling\n"
        "  Mesh-2048: {workload: mesh-tangling-2048, methods: [Spatial]}\n"}});
  const Predictions p = predict(load_suite(dir));
  EXPECT_EQ(p.runs.size(), 6u);
  EXPECT_FALSE(p.runs.contains({"Mesh-2048", "Sample", 4, 1}));
  EXPECT_EQ(p.runs.at({"Mesh", "Spatial", 4, 1}).spatial_ways, 4);
  EXPECT_EQ(p.runs.at({"Mesh", "Sample", 4, 1}).spatial_ways, 1);
  EXPECT_EQ(p.runs.at({"Mesh", "Spatial", 1, 1}).spatial_ways, 1);  // one GPU holds whole samples
  EXPECT_EQ(p.runs.at({"Mesh", "Spatial", 1, 1}).iteration_s,
            p.runs.at({"Mesh", "Sample", 1, 1}).iteration_s);
  EXPECT_LT(p.runs.at({"Mesh-2048", "Spatial", 4, 1}).memory_gpu0_gb,
            p.runs.at({"Mesh-2048", "Spatial", 1, 1}).memory_gpu0_gb);
}

}  // namespace
}  // namespace gpuscale::validation
