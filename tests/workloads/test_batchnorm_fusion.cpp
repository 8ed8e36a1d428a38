// Batch normalisation fused with its ReLU and with a residual's sum (workloads/src/
// batchnorm_fusion.hpp): the graph the rewrite leaves, the traffic each fused kernel moves against
// the kernels it replaces (closed forms in elements of the block's tensors), and a bad name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/test_support.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::wl {
namespace {

using ::testing::HasSubstr;
using testing::config_error_of;
using testing::write_temp_file;

// One bottleneck-like residual block on a 4x8x8 input whose shape changes, so that the shortcut
// is a projection computed after the body: conv, batchnorm, relu, conv, batchnorm; projection
// conv, batchnorm; the sum; relu; then a pool reading the block's output.
std::string block(const std::string& fusions) {
  return "name: t\ndataset: synthetic\ninput: {channels: 4, height: 8, width: 8}\n" + fusions +
         "layers:\n"
         "  - residual:\n"
         "      body:\n"
         "        - conv: {filters: 8, kernel: 3, pad: 1, bias: false}\n"
         "        - batchnorm\n"
         "        - relu\n"
         "        - conv: {filters: 16, kernel: 1, bias: false}\n"
         "        - batchnorm\n"
         "      projection:\n"
         "        - conv: {filters: 16, kernel: 1, bias: false}\n"
         "        - batchnorm\n"
         "  - relu\n"
         "  - pool: {kind: avg, global: true}\n";
}

Workload load_block(const std::string& fusions) {
  return load_workload(write_temp_file("block.yaml", block(fusions)));
}

int index_of(const Workload& w, const std::string& name) {
  for (size_t i = 0; i < w.layers.size(); ++i) {
    if (w.layers[i].name == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no layer " << name;
  return -1;
}

std::vector<std::string> names(const Workload& w) {
  std::vector<std::string> out;
  for (const Layer& l : w.layers) out.push_back(l.name);
  return out;
}

TEST(BatchNormFusion, TheReluAndTheSumLeaveTheGraphAndTheNormTakesTheSumsPlace) {
  const Workload plain = load_block("");
  ASSERT_EQ(plain.layers.size(), 11u);  // input, 5 body, 2 projection, sum, relu, pool
  const Workload fused = load_block("fusions: [batchnorm_relu, batchnorm_add_relu]\n");
  // The body's ReLU, the sum and the block's ReLU are gone; the body's last norm runs after the
  // projection, whose output it adds.
  EXPECT_EQ(names(fused), (std::vector<std::string>{"data", "conv1", "batchnorm1", "conv2",
                                                    "projection.conv1", "projection.batchnorm1",
                                                    "batchnorm2", "pool1"}));
  const Layer& first = fused.layers[static_cast<size_t>(index_of(fused, "batchnorm1"))];
  EXPECT_TRUE(first.params.fused_relu);
  EXPECT_EQ(first.inputs, (std::vector<int>{index_of(fused, "conv1")}));
  const Layer& last = fused.layers[static_cast<size_t>(index_of(fused, "batchnorm2"))];
  EXPECT_TRUE(last.params.fused_relu);
  EXPECT_EQ(last.inputs, (std::vector<int>{index_of(fused, "conv2"),
                                           index_of(fused, "projection.batchnorm1")}));
  // The readers of a removed layer read the norm that computes it now.
  EXPECT_EQ(fused.layers[static_cast<size_t>(index_of(fused, "conv2"))].inputs,
            (std::vector<int>{index_of(fused, "batchnorm1")}));
  EXPECT_EQ(fused.layers[static_cast<size_t>(index_of(fused, "pool1"))].inputs,
            (std::vector<int>{index_of(fused, "batchnorm2")}));
  // A norm is fused only where its ReLU (or sum) is its only reader: the projection's norm is
  // the sum's other input, and stays plain.
  const int projection_norm = index_of(fused, "projection.batchnorm1");
  EXPECT_FALSE(fused.layers[static_cast<size_t>(projection_norm)].params.fused_relu);

  // Each fusion alone.
  EXPECT_EQ(load_block("fusions: [batchnorm_relu]\n").layers.size(), 10u);
  EXPECT_EQ(load_block("fusions: [batchnorm_add_relu]\n").layers.size(), 9u);
}

// Traffic in elements per sample (FP32, 4 bytes), from the layer-cost conventions
// (docs/workload-schema.md#costs). For the first norm, x = y = 8x8x8 = 512 elements: plain, its
// forward reads x twice and writes y (3 x 512) and its backward reads dY, writes dX, reads X for
// the weights, then dY and X again (5 x 512); the ReLU after it reads and writes (2 x 512) and
// reads y and dY and writes dX backward (3 x 512). Fused, forward is the norm's, and backward
// reads y beside dY in both passes: 7 x 512 in all, against 10 + 3 x 512 before.
TEST(BatchNormFusion, AFusedNormMovesWhatItsKernelReadsAndWritesAndNoMore) {
  const Workload plain = load_block("");
  const Workload fused = load_block("fusions: [batchnorm_relu, batchnorm_add_relu]\n");
  const WorkloadCosts p = compute_costs(plain);
  const WorkloadCosts f = compute_costs(fused);
  const double bytes = 4 * 512;
  const LayerCost& plain_norm = p.layers[static_cast<size_t>(index_of(plain, "batchnorm1"))];
  const LayerCost& plain_relu = p.layers[static_cast<size_t>(index_of(plain, "relu1"))];
  const LayerCost& fused_norm = f.layers[static_cast<size_t>(index_of(fused, "batchnorm1"))];
  EXPECT_DOUBLE_EQ(plain_norm.fwd_activation_bytes, 3 * bytes);
  EXPECT_DOUBLE_EQ(plain_norm.bwd_activation_bytes, 5 * bytes);
  EXPECT_DOUBLE_EQ(plain_relu.fwd_activation_bytes + plain_relu.bwd_activation_bytes, 5 * bytes);
  EXPECT_DOUBLE_EQ(fused_norm.fwd_activation_bytes, 3 * bytes);
  EXPECT_DOUBLE_EQ(fused_norm.bwd_activation_bytes, 7 * bytes);
  // Its FLOPs are the two layers' (7 + 1 forward, 9 + 1 backward-data per element).
  EXPECT_DOUBLE_EQ(fused_norm.fwd_flops, plain_norm.fwd_flops + plain_relu.fwd_flops);
  EXPECT_DOUBLE_EQ(fused_norm.bwd_data_flops,
                   plain_norm.bwd_data_flops + plain_relu.bwd_data_flops);

  // The last norm, 16x8x8 = 1024 elements, with the projection's output z as its addend: forward
  // also reads z (4 x 1024 against the plain norm's 3), backward also writes dz and reads y twice
  // (8 x 1024 against 5); the sum's forward (3 x 1024) and the ReLU's (5 x 1024) are gone.
  const double wide = 4 * 1024;
  const LayerCost& plain_last = p.layers[static_cast<size_t>(index_of(plain, "batchnorm2"))];
  const LayerCost& fused_last = f.layers[static_cast<size_t>(index_of(fused, "batchnorm2"))];
  EXPECT_DOUBLE_EQ(plain_last.fwd_activation_bytes, 3 * wide);
  EXPECT_DOUBLE_EQ(plain_last.bwd_activation_bytes, 5 * wide);
  EXPECT_DOUBLE_EQ(fused_last.fwd_activation_bytes, 4 * wide);
  EXPECT_DOUBLE_EQ(fused_last.bwd_activation_bytes, 8 * wide);
  EXPECT_DOUBLE_EQ(fused_last.fwd_flops, (7 + 1 + 1) * 1024.0);
  // Nothing else moves: the parameters, and what each layer keeps, are the plain model's but for
  // the ReLUs' and the sum's outputs.
  EXPECT_EQ(f.params, p.params);
  EXPECT_DOUBLE_EQ(fused_last.activation_bytes, plain_last.activation_bytes);
}

TEST(BatchNormFusion, AnUnknownFusionIsRefusedWithTheKnownOnes) {
  const std::string path =
      write_temp_file("bad.yaml", block("fusions: [batchnorm_rleu]\n"));
  const std::string message = config_error_of([&] { load_workload(path); });
  EXPECT_THAT(message, HasSubstr(path + ":4:"));
  EXPECT_THAT(message, HasSubstr("unknown fusion 'batchnorm_rleu'"));
  EXPECT_THAT(message, HasSubstr("batchnorm_relu"));
}

}  // namespace
}  // namespace gpuscale::wl
