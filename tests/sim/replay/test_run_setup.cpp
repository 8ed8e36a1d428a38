// Per-run set-up (sim/replay/run_setup.hpp) against closed forms: cuDNN autotuning times each
// distinct convolution's 8 + 6 + 7 algorithms once, the initial weight broadcast is the slowest
// route's copy of all weights; the epoch pays it once, so weak scaling amortises it and strong
// scaling does not; `--without setup` removes it.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <regex>

#include "sim/experiment/experiment.hpp"
#include "sim/experiment/replay_inputs.hpp"
#include "sim/replay/run_setup.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale::sim {
namespace {

// A 1x1 convolution (the first: no data gradient), conv 16@3x3 twice at the same shape (tuned
// once), then one at another shape.
const char* kTwoShapes = R"(name: two-shapes
description: four convolutions, two of one shape
source: test
dataset: synthetic
input: {channels: 16, height: 32, width: 32}
precision: fp32
layers:
  - conv: {filters: 16, kernel: 1}
  - conv: {filters: 16, kernel: 3, pad: 1}
  - conv: {filters: 16, kernel: 3, pad: 1}
  - conv: {filters: 32, kernel: 3, pad: 1}
  - fc: {outputs: 10}
  - softmax
)";

Configuration config(const std::string& workload, int gpus) {
  Configuration c;
  c.workload = workload;
  c.comm = "p2p";
  c.batch = 16;
  c.gpus = gpus;
  return c;
}

double tuning_of(const ReplayInputs& in, int layer) {
  const compute::LayerTimes t = in.compute->layer_times(layer, 16);
  return 8 * t.forward.value + 6 * t.backward_data.value + 7 * t.backward_weights.value;
}

TEST(RunSetup, AutotuneTimesEveryAlgorithmOfEachDistinctConvolutionOnce) {
  const std::string path = testing::write_temp_file("two-shapes.yaml", kTwoShapes);
  const ReplayInputs in(Experiment{}, config(path, 1));
  // Layer 0 is the input; layer 3 repeats layer 2.
  const double expected = tuning_of(in, 1) + tuning_of(in, 2) + tuning_of(in, 4);
  ASSERT_GT(expected, 0);
  EXPECT_NEAR(run_setup_cost(in.setup).autotune_s / expected, 1.0, 1e-12);
}

TEST(RunSetup, AFrameworkThatDoesNotAutotunePaysNoTuning) {
  const wl::FrameworkConfig shipped = wl::load_framework("mxnet");
  std::ifstream file(shipped.file);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  text = std::regex_replace(text, std::regex("cudnn_autotune: true"), "cudnn_autotune: false");
  Experiment e;
  e.framework = testing::write_temp_file("no-autotune.yaml", text);
  const ReplayInputs in(e, config("lenet", 1));
  EXPECT_EQ(run_setup_cost(in.setup).autotune_s, 0);
}

TEST(RunSetup, WeightBroadcastIsTheSlowestRoutesCopyOfAllWeights) {
  const ReplayInputs one(Experiment{}, config("lenet", 1));
  EXPECT_EQ(run_setup_cost(one.setup).weight_broadcast_s, 0);  // nothing to copy

  // GPU0 -> GPU1 on the DGX-1 is one NVLink hop: latency + bytes / bandwidth.
  const ReplayInputs two(Experiment{}, config("lenet", 2));
  const Bytes weights{70753070.0 * 4};  // lenet.yaml's weights, fp32
  const double one_hop = two.router.route(two.setup.gpus[0], two.setup.gpus[1])
                             .copy_time(two.machine, weights).value;
  EXPECT_NEAR(run_setup_cost(two.setup).weight_broadcast_s / one_hop, 1.0, 1e-12);

  // At 8 GPUs some GPU is two hops from GPU0 (the hybrid cube-mesh): a longer broadcast.
  const ReplayInputs eight(Experiment{}, config("lenet", 8));
  EXPECT_GT(run_setup_cost(eight.setup).weight_broadcast_s, 1.5 * one_hop);
}

ResultRow run_one(Experiment e) {
  e.workloads = {"lenet"};
  e.batches = {16};
  e.comms = {"p2p"};
  e.images = 64000;
  const auto rows = run_experiment(e);
  EXPECT_EQ(rows.size(), e.gpus.size());
  return rows.back();
}

TEST(RunSetup, TheEpochPaysItOnceWhateverTheScaling) {
  for (const Scaling scaling : {Scaling::Strong, Scaling::Weak}) {
    Experiment e;
    e.gpus = {4};
    e.scaling = scaling;
    const ResultRow r = run_one(e);
    const double iterations = scaling == Scaling::Strong ? 64000 / 64 : 4 * 64000 / 64;
    EXPECT_GT(r.setup_s, 0);
    EXPECT_NEAR((r.epoch_s - r.setup_s) / (r.iteration_s * iterations), 1.0, 1e-9);
  }
}

TEST(RunSetup, WithoutSetupTheEpochIsIterationsOnly) {
  Experiment e;
  e.gpus = {2};
  e.without = {"setup"};
  const ResultRow r = run_one(e);
  EXPECT_EQ(r.setup_s, 0);
  EXPECT_NEAR(r.epoch_s / (r.iteration_s * 64000 / 32), 1.0, 1e-9);
}

}  // namespace
}  // namespace gpuscale::sim
