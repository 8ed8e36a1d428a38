// Sampled variability in the replay (docs/variability.md): every synchronisation waits for the
// slowest rank, so with i.i.d. per-rank compute factors the mean iteration grows by the expected
// maximum of N draws (closed forms), whether every rank is simulated or one stands for all
// through an order statistic; host factors apply per process; a prefetch queue absorbs the input
// pipeline's jitter; zero spread and runs that do not sample are today's deterministic replay
// exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>

#include "sim/experiment/experiment.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale::sim {
namespace {

// A machine derived from a shipped one with a `variability:` section (its text).
std::string machine_with(const std::string& base, const std::string& variability) {
  return testing::write_temp_file(base + "-noisy.yaml", "base: " + base + "\nname: " + base +
                                                            "-noisy\nvariability: " + variability +
                                                            "\n");
}

// AlexNet under DDP with one bucket: every rank runs its whole backward, then one allreduce of
// all gradients, so each iteration is the slowest rank's forward and backward plus a tail that
// no factor changes. No host mechanism: only the kernels vary.
Experiment one_bucket(const std::string& machine, int gpus, int samples) {
  Experiment e;
  e.topology = machine;
  e.framework = "pytorch-ddp";
  e.workloads = {"alexnet"};
  e.gpus = {gpus};
  e.batches = {32};
  e.comms = {"nccl"};
  e.fusion_mb = 1e6;
  e.without = {"engine", "host", "input", "setup"};
  e.samples = samples;
  return e;
}

ResultRow run_one(const Experiment& e) {
  const auto rows = run_experiment(e);
  EXPECT_EQ(rows.size(), 1u);
  return rows.back();
}

// E[max of n standard normals], by the trapezoid rule (as in test_distribution.cpp).
double expected_max_of_standard_normals(int n) {
  const double step = 1e-4;
  double sum = 0;
  for (double x = -10; x <= 10; x += step) {
    const double pdf = std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi);
    sum += x * n * pdf * std::pow(0.5 * std::erfc(-x / std::numbers::sqrt2), n - 1) * step;
  }
  return sum;
}

const char* kStill = "{compute: {distribution: normal, cv: 0, source: test}}";

// The mean iteration with `variability` (mean_with runs a sampled run on a machine with that
// section), less the one where `source` does not vary, in units of the time `source` scales:
// the growth of the iteration when every factor of `source` is 1.1, over 0.1. For compute, the
// kernels' sum as modelled (the replay's fpbp_s is their run times, longer where a forward
// shares its GPU with the previous iteration's updates). The still run simulates as many
// iterations (zero spread is the deterministic replay: a test below), so that what the first
// iterations leave in the mean is the same in all three.
double excess_in_units_of(const std::string& source, const std::string& variability,
                          const std::function<double(const std::string&)>& mean_with) {
  const double still =
      mean_with("{" + source + ": {distribution: normal, cv: 0, source: test}}");
  const double tenth_slower = mean_with(
      "{" + source + ": {distribution: empirical, quantiles: [1.1, 1.1], source: test}}");
  const double unit = (tenth_slower - still) / 0.1;
  return (mean_with(variability) - still) / unit;
}

// The excess in units of the forward and backward kernels' time: the closed form's cv x E[max].
double excess_per_compute(const std::string& base, const std::string& variability, int gpus) {
  return excess_in_units_of("compute", variability, [&](const std::string& v) {
    return run_one(one_bucket(machine_with(base, v), gpus, 1000)).iteration_s;
  });
}

const char* kNormal = "{compute: {distribution: normal, cv: 0.1, source: test}}";

// Four standard errors of the mean of 1000 maxima of normal factors with cv 0.1 (a maximum's
// standard deviation is at most the draws').
constexpr double kNormalTolerance = 4 * 0.1 / 31.6;

TEST(Variability, EveryRankSimulatedTheIterationWaitsForTheSlowest) {
  for (int gpus : {2, 4, 8}) {
    EXPECT_NEAR(excess_per_compute("dgx1-v100", kNormal, gpus),
                0.1 * expected_max_of_standard_normals(gpus), kNormalTolerance)
        << gpus << " GPUs";
  }
}

TEST(Variability, ExponentialFactorsAddTheHarmonicNumber) {
  // The largest of 8 draws of 1 + Exp(0.05) exceeds 1 by 0.05 H_8 on average.
  const double h8 = 1 + 1 / 2. + 1 / 3. + 1 / 4. + 1 / 5. + 1 / 6. + 1 / 7. + 1 / 8.;
  const char* exponential = "{compute: {distribution: exponential, mean: 0.05, source: test}}";
  EXPECT_NEAR(excess_per_compute("dgx1-v100", exponential, 8), 0.05 * h8, 4 * 0.05 * 1.3 / 31.6);
}

TEST(Variability, OneRankStandsForManyThroughTheLargestOfTheirDraws) {
  // 64 GPUs: the replay simulates rank 0 alone, drawing the largest of 64 factors.
  EXPECT_NEAR(excess_per_compute("lassen", kNormal, 64), 0.1 * expected_max_of_standard_normals(64),
              kNormalTolerance);
}

TEST(Variability, ZeroSpreadIsTheDeterministicReplay) {
  const std::string still = machine_with("dgx1-v100", kStill);
  Experiment deterministic = one_bucket("dgx1-v100", 4, 0);
  deterministic.iterations = 10;
  const ResultRow sampled = run_one(one_bucket(still, 4, 9));
  const ResultRow expected = run_one(deterministic);
  EXPECT_EQ(sampled.iteration_s, expected.iteration_s);
  EXPECT_EQ(sampled.fpbp_s, expected.fpbp_s);
}

TEST(Variability, AMachineThatVariesRunsDeterministicallyUnlessSampled) {
  Experiment shipped = one_bucket("dgx1-v100", 4, 0);
  shipped.framework = "mxnet";
  shipped.without = {};
  Experiment noisy = shipped;
  noisy.topology = machine_with("dgx1-v100", kNormal);
  const ResultRow a = run_one(shipped), b = run_one(noisy);
  EXPECT_EQ(a.iteration_s, b.iteration_s);
  EXPECT_EQ(a.epoch_s, b.epoch_s);
  EXPECT_EQ(a.wu_s, b.wu_s);
  EXPECT_EQ(b.spread.samples, 0);
}

TEST(Variability, OneProcessDrawsOneHostFactorForAllItsGpus) {
  // MXNet's Python thread at 100 ms per key dominates LeNet's iteration (HostModel's closed
  // form: keys x python_per_key). It is one thread for all GPUs, so its factor is one draw, not
  // the largest of four: the mean is keys x 0.1 s x (1 + 0.2).
  Experiment e;
  e.topology = machine_with("dgx1-v100",
                            "{host: {distribution: exponential, mean: 0.2, source: test}}");
  e.framework = testing::framework_file_with(
      "python_per_key", "{value: 100 ms, fitted: true, range: [0 s, 1 s]}");
  e.workloads = {"lenet"};
  e.gpus = {4};
  e.batches = {16};
  e.comms = {"p2p"};
  e.without = {"input"};
  e.samples = 400;
  const int keys = 8;
  // Four standard errors of the mean of 400 factors 1 + Exp(0.2): 4 x 0.2 / 20.
  EXPECT_NEAR(run_one(e).iteration_s / (keys * 0.1), 1.2, 0.04);
}

// AlexNet at batch 256 under DDP on Lassen waits for its input (the decode threads take about
// four times its forward and backward), ResNet-50 at batch 32 does not (a third).
Experiment input_run(const std::string& variability, const std::string& workload, int batch,
                     int gpus, int samples) {
  Experiment e;
  e.topology = machine_with("lassen", variability);
  e.framework = "pytorch-ddp";
  e.workloads = {workload};
  e.gpus = {gpus};
  e.batches = {batch};
  e.comms = {"nccl"};
  e.samples = samples;
  return e;
}

// The excess of a decode-bound run in units of one batch's decode time.
double excess_per_decode(const std::string& variability, int gpus, int samples) {
  return excess_in_units_of("input", variability, [&](const std::string& v) {
    return run_one(input_run(v, "alexnet", 256, gpus, samples)).iteration_s;
  });
}

const char* kSlowBatches = "{input: {distribution: exponential, mean: 0.2, source: test}}";

TEST(Variability, ADecodeBoundProcessRunsAtItsMeanBatchTime) {
  // The decode threads never idle: every iteration is one batch's decode, 1 + Exp(0.2) times
  // the modelled one. Four standard errors of the mean of 400 draws: 4 x 0.2 / 20.
  EXPECT_NEAR(excess_per_decode(kSlowBatches, 1, 400), 0.2, 0.04);
}

TEST(Variability, ManyProcessesWaitForTheSlowestQueueNotTheSlowestBatch) {
  // 64 processes, one simulated: each decodes into its own prefetch queue, and the job runs at
  // the pace of the slowest queue. That is no faster than one process's mean (0.2 above), and far
  // below every iteration waiting for the slowest of 64 batches (0.2 H_64 = 0.95), which an order
  // statistic on the one simulated process would give.
  const double excess = excess_per_decode(kSlowBatches, 64, 400);
  EXPECT_GT(excess, 0.2 - 0.04);
  EXPECT_LT(excess, 0.4);
}

TEST(Variability, APrefetchQueueAbsorbsJitterWithinItsSlack) {
  // ResNet-50's batch of 32 decodes in a third of its forward and backward: even a batch half as
  // slow again as modelled is ready before it is needed, so no iteration changes (but for the
  // last bits: the engine's clock adds the same times in another order).
  const char* bounded = "{input: {distribution: empirical, quantiles: [0.5, 1.5], source: test}}";
  const char* still = "{input: {distribution: normal, cv: 0, source: test}}";
  const double expected = run_one(input_run(still, "resnet-50", 32, 4, 100)).iteration_s;
  EXPECT_NEAR(run_one(input_run(bounded, "resnet-50", 32, 4, 100)).iteration_s, expected,
              1e-12 * expected);
}

TEST(Variability, TheSameSeedGivesTheSameOutput) {
  const std::string machine = machine_with("dgx1-v100", kNormal);
  const std::string run = std::string(GPUSCALE_EXECUTABLE) + " run --topology " + machine +
                          " --workload alexnet --gpus 1,4 --comm nccl --samples 20 --format json";
  const auto first = testing::run_command(run + " --seed 5");
  const auto again = testing::run_command(run + " --seed 5");
  const auto other = testing::run_command(run + " --seed 6");
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(first.out, again.out);
  EXPECT_NE(first.out, other.out);
  const auto j = nlohmann::json::parse(first.out);
  EXPECT_EQ(j["seed"], 5);
  for (const auto& row : j["results"]) {
    EXPECT_EQ(row["samples"], 20) << row.dump();
    EXPECT_LE(row["iteration_p10_s"].get<double>(), row["iteration_p90_s"].get<double>());
  }
}

}  // namespace
}  // namespace gpuscale::sim
