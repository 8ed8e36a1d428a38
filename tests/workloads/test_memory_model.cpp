// The memory model's parts (workloads/src/memory_model.hpp) against closed forms: weights and
// gradients are the parameters' bytes; the optimizer state moves to the store where the exchange
// runs it; activations grow linearly with the batch; the cuDNN workspace is capped; the
// exchange's buffers land on their GPUs; the largest batch is the last that fits. What each
// exchange method keeps is tests/sim/exchange/test_exchange_methods.cpp's.
#include <gtest/gtest.h>

#include <numeric>

#include "workloads/src/memory_model.hpp"
#include "workloads/src/reducer_assignment.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::wl {
namespace {

struct Fixture {
  Workload w = load_workload("lenet");
  WorkloadCosts c = compute_costs(w);
  FrameworkConfig f = load_framework("mxnet");
  double param_bytes() const { return static_cast<double>(c.params) * 4; }
};

TEST(ReducerAssignment, GreedyBalancesLargestFirstAndTiesGoToTheLowestGpu) {
  const std::vector<double> sizes = {10, 70, 20, 30, 30};
  EXPECT_EQ(assign_reducers(sizes, 2, ReducerPolicy::Greedy), (std::vector<int>{0, 0, 1, 1, 1}));
  EXPECT_EQ(assign_reducers(sizes, 3, ReducerPolicy::Greedy), (std::vector<int>{2, 0, 1, 1, 2}));
  EXPECT_EQ(assign_reducers(sizes, 3, ReducerPolicy::AllOnGpu0), (std::vector<int>(5, 0)));
}

TEST(MemoryModel, OneGpuHoldsWeightsGradientsAndOptimizerState) {
  const Fixture x;
  const auto gpus = estimate_memory(x.w, x.c, x.f, {.batch = 16, .gpus = 1});
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(gpus[0].weights, x.param_bytes());
  EXPECT_DOUBLE_EQ(gpus[0].gradients, x.param_bytes());
  EXPECT_DOUBLE_EQ(gpus[0].optimizer, x.param_bytes());  // SGD momentum: one array per parameter
  EXPECT_DOUBLE_EQ(gpus[0].context, x.f.context.value.value);
  EXPECT_DOUBLE_EQ(gpus[0].exchange, 0);
}

TEST(MemoryModel, BeforeTrainingIsTheContextWeightsAndGradientsOnEveryGpu) {
  const Fixture x;
  std::vector<double> buffers(8, 0.0);
  buffers[0] = 3 * x.param_bytes();
  const auto gpus = estimate_memory(x.w, x.c, x.f,
                                    {.batch = 64, .gpus = 8, .exchange = {true, buffers}});
  for (const MemoryParts& g : gpus) {
    EXPECT_DOUBLE_EQ(g.before_training(), x.f.context.value.value + 2 * x.param_bytes());
  }
}

// Attention keeps its probabilities for backward, h T^2 per sample: Transformer big's grow with
// the square of the sentence; a tied weight is held (and its gradient) once.
TEST(MemoryModel, AttentionKeepsItsProbabilitiesAndTiedWeightsCountOnce) {
  const FrameworkConfig f = load_framework("mxnet");
  const auto activations = [&](int tokens) {
    const Workload w = load_workload(
        "transformer-big", {"input.height=" + std::to_string(tokens)});
    return estimate_memory(w, compute_costs(w), f, {.batch = 1, .gpus = 1})[0].activations;
  };
  // 6 encoder + 12 decoder attentions of 16 heads: doubling T from 64 adds their
  // 16 (128^2 - 64^2) probabilities each, beyond what grows linearly.
  const double a64 = activations(64), a128 = activations(128), a256 = activations(256);
  const double quadratic = (a256 - 2 * a128) - 2 * (a128 - 2 * a64);
  EXPECT_NEAR(quadratic, 18 * 16 * 4.0 * (256.0 * 256 - 4 * 128 * 128 + 4 * 64 * 64), 1.0);
  const Workload w = load_workload("transformer-big");
  const auto gpu = estimate_memory(w, compute_costs(w), f, {.batch = 1, .gpus = 1})[0];
  EXPECT_DOUBLE_EQ(gpu.weights, 210804736.0 * 4);
}

TEST(MemoryModel, ActivationsGrowLinearlyWithTheBatch) {
  const Fixture x;
  const double a16 = estimate_memory(x.w, x.c, x.f, {.batch = 16, .gpus = 1})[0].activations;
  const double a32 = estimate_memory(x.w, x.c, x.f, {.batch = 32, .gpus = 1})[0].activations;
  EXPECT_NEAR(a32, 2 * a16, 1e-6 * a32);
  // Every layer's kept output, plus the two largest outputs for the gradients alive in backward.
  double kept = 0, largest = 0;
  for (size_t i = 0; i < x.w.layers.size(); ++i) {
    kept += x.c.layers[i].activation_bytes;
    largest = std::max(largest, x.w.layers[i].output.elements() * 4.0);
  }
  EXPECT_NEAR(a16, 16 * (kept + 2 * largest), 1e-6 * a16);
}

TEST(MemoryModel, AReluInPlaceKeepsNothingOfItsOwn) {
  const Workload w = load_workload("resnet-50");
  const WorkloadCosts c = compute_costs(w);
  FrameworkConfig f = load_framework("mxnet");
  ASSERT_FALSE(f.relu_in_place);  // MXNet 1.1 with cuDNN
  const double kept = estimate_memory(w, c, f, {.batch = 8, .gpus = 1})[0].activations;
  f.relu_in_place = true;
  const double in_place = estimate_memory(w, c, f, {.batch = 8, .gpus = 1})[0].activations;
  double relu_outputs = 0;
  for (const Layer& layer : w.layers)
    if (layer.type == LayerType::Relu) relu_outputs += layer.output.elements() * 4.0;
  ASSERT_GT(relu_outputs, 0);
  EXPECT_NEAR(kept - in_place, 8 * relu_outputs, 1e-6 * kept);
}

TEST(MemoryModel, WorkspaceIsWhatTheComputeModelPlansAtTheBatch) {
  const Fixture x;
  MemoryOptions o{.batch = 16, .gpus = 1};
  EXPECT_EQ(estimate_memory(x.w, x.c, x.f, o)[0].workspace, 0);  // no convolution planned
  o.workspace_bytes = [](int batch) { return 1e6 * batch; };
  const auto gpus = estimate_memory(x.w, x.c, x.f, o);
  EXPECT_DOUBLE_EQ(gpus[0].workspace, 16e6);
  EXPECT_DOUBLE_EQ(gpus[0].total() - 16e6,
                   estimate_memory(x.w, x.c, x.f, {.batch = 16, .gpus = 1})[0].total());
}

// Spatial parallelism: the halos a GPU keeps until backward are activations, per sample.
TEST(MemoryModel, KeptHalosCountWithTheActivationsPerSample) {
  const Fixture x;
  MemoryOptions o{.batch = 3, .gpus = 1};
  const double without = estimate_memory(x.w, x.c, x.f, o)[0].activations;
  o.halo_elements_per_sample = 1000;
  EXPECT_DOUBLE_EQ(estimate_memory(x.w, x.c, x.f, o)[0].activations - without, 3 * 1000 * 4.0);
}

TEST(MemoryModel, ExchangeBuffersLandOnTheirGpusAndAStoreTakesTheOptimizerState) {
  const Fixture x;
  const auto gpus = estimate_memory(x.w, x.c, x.f,
                                    {.batch = 16, .gpus = 3, .exchange = {true, {5e6, 0, 7e6}}});
  EXPECT_DOUBLE_EQ(gpus[0].exchange, 5e6);
  EXPECT_DOUBLE_EQ(gpus[1].exchange, 0);
  EXPECT_DOUBLE_EQ(gpus[2].exchange, 7e6);
  for (const MemoryParts& g : gpus) EXPECT_DOUBLE_EQ(g.optimizer, 0);
  const auto replicas = estimate_memory(x.w, x.c, x.f,
                                        {.batch = 16, .gpus = 3, .exchange = {false, {1, 1, 1}}});
  for (const MemoryParts& g : replicas) EXPECT_DOUBLE_EQ(g.optimizer, x.param_bytes());
}

TEST(MemoryModel, ExchangeBuffersForAnotherGpuCountAreRefused) {
  const Fixture x;
  EXPECT_THROW(estimate_memory(x.w, x.c, x.f, {.batch = 16, .gpus = 4, .exchange = {false, {1, 2}}}),
               std::invalid_argument);
}

TEST(MemoryModel, LargestBatchIsTheLastThatFits) {
  const Fixture x;
  const MemoryOptions options{.batch = 1, .gpus = 8};
  const double capacity = 16e9;
  const int b = largest_batch(x.w, x.c, x.f, options, capacity);
  ASSERT_GT(b, 0);
  auto peak = [&](int batch) {
    MemoryOptions o = options;
    o.batch = batch;
    double most = 0;
    for (const MemoryParts& g : estimate_memory(x.w, x.c, x.f, o)) most = std::max(most, g.total());
    return most;
  };
  EXPECT_LE(peak(b), capacity);
  EXPECT_GT(peak(b + 1), capacity);
  EXPECT_EQ(largest_batch(x.w, x.c, x.f, options, 1e6), 0);  // not even the context fits
}

}  // namespace
}  // namespace gpuscale::wl
