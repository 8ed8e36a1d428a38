// Shapes are inferred from the input and hyper-parameters (docs/workload-schema.md#layers):
// convolution and pooling arithmetic, branches joined by concat, residual shortcuts with and
// without projection, pixel shuffle, templates with arguments, repeat and first, `base:`
// derivation and `--set args.NAME=VALUE`.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/test_support.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::wl {
namespace {

using testing::write_temp_file;

// A model file around `layers` (YAML lines, each indented by two spaces) on a 3x32x32 input.
std::string model(const std::string& layers, const std::string& extra = "") {
  return "name: t\ndataset: synthetic\ninput: {channels: 3, height: 32, width: 32}\n" + extra +
         "layers:\n" + layers;
}

Workload load_text(const std::string& text, const std::string& file = "model.yaml") {
  return load_workload(write_temp_file(file, text));
}

const Layer& layer_named(const Workload& w, const std::string& name) {
  for (const Layer& l : w.layers) {
    if (l.name == name) return l;
  }
  throw std::runtime_error("no layer " + name);
}

TEST(ShapeInference, ConvolutionArithmetic) {
  const Workload w = load_text(model(
      "  - conv: {filters: 16, kernel: 3, pad: 1}\n"
      "  - conv: {filters: 8, kernel: 5, stride: 2}\n"
      "  - conv: {filters: 4, kernel: [1, 3], pad: same}\n"
      "  - conv: {filters: 4, kernel: 3, groups: 2, bias: false}\n"));
  EXPECT_EQ(layer_named(w, "conv1").output, (Shape{16, 32, 32}));
  EXPECT_EQ(layer_named(w, "conv2").output, (Shape{8, 14, 14}));  // floor((32-5)/2)+1
  EXPECT_EQ(layer_named(w, "conv3").output, (Shape{4, 14, 14}));
  EXPECT_EQ(layer_named(w, "conv4").output, (Shape{4, 12, 12}));
  const WorkloadCosts c = compute_costs(w);
  EXPECT_EQ(c.layers[1].params, 16 * 3 * 3 * 3 + 16);
  EXPECT_EQ(c.layers[4].params, 4 * 2 * 3 * 3);  // groups halve the inputs per filter, no bias
  // The conv MACs closed form: H_out W_out filters kh kw C_in/groups.
  EXPECT_DOUBLE_EQ(c.layers[2].fwd_macs, 14.0 * 14 * 8 * 5 * 5 * 16);
}

TEST(ShapeInference, PoolingFloorCeilAndGlobal) {
  const Workload w = load_text(model(
      "  - pool: {kind: max, kernel: 3, stride: 2}\n"
      "  - pool: {kind: max, kernel: 3, stride: 2, ceil: true}\n"
      "  - pool: {kind: avg, kernel: 2}\n"
      "  - pool: {kind: avg, global: true}\n"));
  EXPECT_EQ(layer_named(w, "pool1").output, (Shape{3, 15, 15}));  // floor(29/2)+1
  EXPECT_EQ(layer_named(w, "pool2").output, (Shape{3, 7, 7}));    // ceil(12/2)+1
  EXPECT_EQ(layer_named(w, "pool3").output, (Shape{3, 3, 3}));    // stride defaults to kernel
  EXPECT_EQ(layer_named(w, "pool4").output, (Shape{3, 1, 1}));
}

TEST(ShapeInference, ConcatSumsChannelsOfNamedBranches) {
  const Workload w = load_text(model(
      "  - concat:\n"
      "      branches:\n"
      "        a: [conv: {filters: 8, kernel: 1}]\n"
      "        b: [conv: {filters: 4, kernel: 1}, conv: {filters: 6, kernel: 3, pad: 1}]\n"
      "        pool: [pool: {kernel: 3, stride: 1, pad: 1}]\n"
      "        skip: []\n"
      "  - relu\n"));
  const Layer& join = layer_named(w, "concat1");
  EXPECT_EQ(join.type, LayerType::Concat);
  EXPECT_EQ(join.output, (Shape{8 + 6 + 3 + 3, 32, 32}));
  ASSERT_EQ(join.inputs.size(), 4u);
  EXPECT_EQ(w.layers[join.inputs[1]].name, "b.conv2");
  EXPECT_EQ(join.inputs[3], 0);  // the empty branch is the input itself
  EXPECT_EQ(layer_named(w, "relu1").inputs, std::vector<int>{static_cast<int>(w.layers.size()) - 2});
}

TEST(ShapeInference, ResidualUsesProjectionOnlyWhenTheShapeChanges) {
  const std::string templates =
      "templates:\n"
      "  block:\n"
      "    args: [out, stride]\n"
      "    layers:\n"
      "      - residual:\n"
      "          body: [conv: {filters: $out, kernel: 3, stride: $stride, pad: 1}]\n"
      "          projection: [conv: {filters: $out, kernel: 1, stride: $stride}]\n";
  const Workload w = load_text(model(
      "  - conv: {filters: 8, kernel: 1}\n"
      "  - block: {template: block, name: s, repeat: 3, args: {out: 16, stride: 1}, first: {stride: 2}}\n",
      templates));
  EXPECT_EQ(layer_named(w, "s.1.add1").output, (Shape{16, 16, 16}));
  EXPECT_EQ(layer_named(w, "s.1.projection.conv1").output, (Shape{16, 16, 16}));
  EXPECT_EQ(layer_named(w, "s.3.add1").output, (Shape{16, 16, 16}));
  for (const Layer& l : w.layers) {
    EXPECT_EQ(l.name.find("s.2.projection"), std::string::npos) << "identity shortcut expected";
  }
  // The identity add reads the body and the block's input.
  const Layer& add2 = layer_named(w, "s.2.add1");
  EXPECT_EQ(w.layers[add2.inputs[1]].name, "s.1.add1");
}

TEST(ShapeInference, PixelShuffleAndUpsample) {
  const Workload w = load_text(model(
      "  - conv: {filters: 12, kernel: 3, pad: 1}\n"
      "  - pixel_shuffle: {factor: 2}\n"
      "  - upsample: {factor: 3}\n"));
  EXPECT_EQ(layer_named(w, "pixel_shuffle1").output, (Shape{3, 64, 64}));
  EXPECT_EQ(layer_named(w, "upsample1").output, (Shape{3, 192, 192}));
}

// SwiGLU: the gate and up projections as one conv of twice the hidden width, then glu.
TEST(ShapeInference, GluHalvesTheChannels) {
  const Workload w = load_text(model(
      "  - conv: {filters: 12, kernel: 1}\n"
      "  - glu\n"));
  EXPECT_EQ(layer_named(w, "glu1").output, (Shape{6, 32, 32}));
  const WorkloadCosts c = compute_costs(w);
  const LayerCost& glu = c.layers.back();
  EXPECT_EQ(glu.params, 0);
  EXPECT_DOUBLE_EQ(glu.fwd_flops, 5.0 * 6 * 32 * 32);
  EXPECT_DOUBLE_EQ(glu.bwd_data_flops, 7.0 * 6 * 32 * 32);
}

TEST(ShapeInference, FcFlattensItsInput) {
  const Workload w = load_text(model("  - fc: {outputs: 10}\n"));
  EXPECT_EQ(compute_costs(w).params, 3 * 32 * 32 * 10 + 10);
}

TEST(ShapeInference, BaseDerivationAndArgOverrides) {
  const std::string base = write_temp_file("base.yaml", model(
      "  - block: {template: unit, name: u, repeat: $units}\n",
      "args: {units: 2}\ntemplates:\n  unit:\n    layers: [conv: {filters: 3, kernel: 3, pad: 1}]\n"));
  const Workload derived = load_text("base: base.yaml\nname: d\nargs: {units: 5}\n", "derived.yaml");
  EXPECT_EQ(derived.name, "d");
  EXPECT_EQ(derived.layers.size(), 1u + 5u);
  const Workload overridden = load_workload(base, {"args.units=7"});
  EXPECT_EQ(overridden.layers.size(), 1u + 7u);
  EXPECT_EQ(overridden.layers.back().name, "u.7.conv1");
}

// An embedding turns 1 x T x 1 ids into dim x T x 1 rows; its costs are a gather forward and a
// scatter-add into a dense gradient table backward (docs/workload-schema.md#costs).
TEST(ShapeInference, EmbeddingGathersOneRowPerId) {
  const Workload w = load_text(
      "name: t\ndataset: synthetic\ninput: {channels: 1, height: 7, width: 1}\nlayers:\n"
      "  - embedding: {vocab: 100, dim: 16}\n"
      "  - fc: {outputs: 4}\n");
  const Layer& e = layer_named(w, "embedding1");
  EXPECT_EQ(e.output, (Shape{16, 7, 1}));
  const WorkloadCosts c = compute_costs(w);
  const LayerCost& ec = c.layers[1];
  EXPECT_EQ(ec.params, 100 * 16);
  ASSERT_FALSE(c.tensors.empty());
  EXPECT_EQ(c.tensors[0].name, "embedding1.weight");
  EXPECT_EQ(ec.fwd_flops, 0);
  EXPECT_EQ(ec.fwd_macs, 0);
  EXPECT_FALSE(ec.has_backward_data);  // ids have no gradient
  EXPECT_EQ(ec.bwd_weight_flops, 16.0 * 7);
  // Forward: ids + gathered rows read, output written; no pass over the whole table.
  EXPECT_DOUBLE_EQ(ec.fwd_bytes(2), 2 * (7 + 2 * 112) * 4.0);
  // Backward: ids and output gradient read, rows read-modify-written, dense table zeroed.
  EXPECT_DOUBLE_EQ(ec.bwd_bytes(2), 2 * (7 + 3 * 112) * 4.0 + 1600 * 4.0);
  EXPECT_EQ(layer_named(w, "fc1").input, (Shape{16, 7, 1}));
  EXPECT_EQ(c.layers[2].params, 16 * 7 * 4 + 4);
  EXPECT_TRUE(c.layers[2].has_backward_data);  // the embedding upstream has parameters
}

// A sequence of T tokens is d x T x 1. Self-attention keeps the shape, with 4 d^2 weights (no
// bias here) and (2 Tq + 2 Tk) d^2 + 2 Tq Tk d forward multiply-adds; cross-attention reads its
// keys and values from `memory`; `from` starts a chain at an earlier layer; `shares` ties a
// weight to an earlier layer's, adding no parameters.
TEST(ShapeInference, AttentionLayerNormAndTiedWeights) {
  const Workload w = load_text(
      "name: t\ndataset: synthetic\ninput: {channels: 1, height: 6, width: 1}\nlayers:\n"
      "  - embedding: {name: embed, vocab: 50, dim: 8}\n"
      "  - layernorm: {name: enc}\n"
      "  - embedding: {name: target, vocab: 50, dim: 8, from: data, shares: embed}\n"
      "  - attention: {name: self, heads: 2, bias: false}\n"
      "  - attention: {name: cross, heads: 4, memory: enc}\n"
      "  - conv: {name: logits, filters: 50, kernel: 1, bias: false, shares: embed}\n");
  const WorkloadCosts c = compute_costs(w);
  const auto cost = [&](const std::string& name) -> const LayerCost& {
    for (size_t i = 0; i < w.layers.size(); ++i) {
      if (w.layers[i].name == name) return c.layers[i];
    }
    throw std::runtime_error("no layer " + name);
  };
  EXPECT_EQ(layer_named(w, "self").output, (Shape{8, 6, 1}));
  EXPECT_EQ(layer_named(w, "target").inputs, (std::vector<int>{0}));
  EXPECT_EQ(layer_named(w, "cross").inputs.size(), 2u);
  EXPECT_EQ(layer_named(w, "logits").output, (Shape{50, 6, 1}));
  EXPECT_EQ(cost("enc").params, 2 * 8);
  EXPECT_EQ(cost("self").params, 4 * 8 * 8);
  EXPECT_EQ(cost("cross").params, 4 * 8 * 8 + 4 * 8);
  EXPECT_EQ(cost("target").params, 0);  // tied to embed
  EXPECT_EQ(cost("logits").params, 0);
  EXPECT_TRUE(cost("logits").has_backward_weights);  // its gradient adds into embed's
  EXPECT_EQ(c.params, 50 * 8 + 2 * 8 + 4 * 8 * 8 + 4 * 8 * 8 + 4 * 8);
  const double t = 6, d = 8;
  EXPECT_DOUBLE_EQ(cost("self").fwd_macs, 4 * t * d * d + 2 * t * t * d);
  // Softmax: 5 FLOPs per probability of each head.
  EXPECT_DOUBLE_EQ(cost("self").fwd_flops, 2 * (4 * t * d * d + 2 * t * t * d) + 5 * 2 * t * t);
  EXPECT_DOUBLE_EQ(cost("self").bwd_weight_flops, 2 * 4 * t * d * d);
  EXPECT_DOUBLE_EQ(cost("self").bwd_data_flops,
                   2 * 4 * t * d * d + 4 * 2 * t * t * d + 3 * 2 * t * t);
  // Kept for backward: output, Q, K, V, context, and the probabilities of every head.
  EXPECT_DOUBLE_EQ(cost("cross").activation_bytes, (5 * t * d + 4 * t * t) * 4);
  EXPECT_DOUBLE_EQ(cost("logits").fwd_macs, t * 50 * d);
}

// Grouped-query attention, 4 query heads sharing 2 key/value heads on d = 8: the K and V
// projections are 8 x 4, the scores still every query head's.
TEST(ShapeInference, GroupedQueryAttentionNarrowsTheKeyAndValueProjections) {
  const Workload w = load_text(
      "name: t\ndataset: synthetic\ninput: {channels: 1, height: 6, width: 1}\nlayers:\n"
      "  - embedding: {name: embed, vocab: 50, dim: 8}\n"
      "  - attention: {name: gqa, heads: 4, kv_heads: 2}\n");
  const WorkloadCosts costs = compute_costs(w);
  const LayerCost& c = costs.layers.back();
  const double t = 6, d = 8, kv = 4;
  EXPECT_EQ(c.params, 2 * 8 * 8 + 2 * 8 * 4 + 2 * 8 + 2 * 4);
  EXPECT_DOUBLE_EQ(c.fwd_macs, (2 * t * d + 2 * t * kv) * d + 2 * t * t * d);
  EXPECT_DOUBLE_EQ(c.fwd_flops, 2 * c.fwd_macs + 5 * 4 * t * t + (2 * t * d + 2 * t * kv));
  // Kept for backward: output, Q and context (t d each), K and V (t kv each), 4 heads' P.
  EXPECT_DOUBLE_EQ(c.activation_bytes, (3 * t * d + 2 * t * kv + 4 * t * t) * 4);
}

// An LSTM of h units over T steps of x features: 4h(x + h) + 8h parameters per direction
// (PyTorch's two biases), 4h(x + h) multiply-adds per step and direction; bidirectional doubles
// both and the output channels. Additive attention: 2d^2 + 2d + 1 parameters.
TEST(ShapeInference, LstmAndAdditiveAttention) {
  const Workload w = load_text(
      "name: t\ndataset: synthetic\ninput: {channels: 1, height: 5, width: 1}\nlayers:\n"
      "  - embedding: {name: embed, vocab: 50, dim: 6}\n"
      "  - lstm: {name: bi, hidden: 4, bidirectional: true}\n"
      "  - lstm: {name: uni, hidden: 4}\n"
      "  - attention: {name: att, score: additive, memory: uni}\n"
      "  - concat: {name: join, branches: {x: [], rnn: {from: uni}}}\n");
  const WorkloadCosts c = compute_costs(w);
  const auto cost = [&](const std::string& name) -> const LayerCost& {
    for (size_t i = 0; i < w.layers.size(); ++i) {
      if (w.layers[i].name == name) return c.layers[i];
    }
    throw std::runtime_error("no layer " + name);
  };
  EXPECT_EQ(layer_named(w, "bi").output, (Shape{8, 5, 1}));
  EXPECT_EQ(layer_named(w, "uni").output, (Shape{4, 5, 1}));
  EXPECT_EQ(layer_named(w, "join").output, (Shape{8, 5, 1}));
  EXPECT_EQ(cost("bi").params, 2 * (4 * 4 * (6 + 4) + 8 * 4));
  EXPECT_EQ(cost("uni").params, 4 * 4 * (8 + 4) + 8 * 4);
  EXPECT_DOUBLE_EQ(cost("uni").fwd_macs, 5.0 * 4 * 4 * (8 + 4));
  EXPECT_DOUBLE_EQ(cost("uni").fwd_flops, 2 * 5.0 * 4 * 4 * 12 + 17 * 4 * 5);
  EXPECT_DOUBLE_EQ(cost("bi").bwd_weight_flops, 2 * (2 * 5.0 * 4 * 4 * 10) + 2 * 8 * 4 * 5);
  EXPECT_EQ(cost("att").params, 2 * 4 * 4 + 2 * 4 + 1);
  const double t = 5, d = 4;
  EXPECT_DOUBLE_EQ(cost("att").fwd_macs, 2 * t * d * d + 2 * t * t * d);
  std::vector<std::string> names;
  for (const ParamTensor& tensor : c.tensors) names.push_back(tensor.name);
  EXPECT_EQ(names[1], "bi.weight_ih_l0");
  EXPECT_EQ(names[5], "bi.weight_ih_l0_reverse");
  EXPECT_EQ(names.back(), "att.normalize_bias");
}

// roi_align (a stand-in) stacks `rois` crops of size x size along the height, with no
// parameters and 32 FLOPs per output element each way; a conv with kernel and stride = size
// then acts as a fully connected layer per region.
TEST(ShapeInference, RoiAlignStacksItsCrops) {
  const Workload w = load_text(model(
      "  - conv: {filters: 8, kernel: 3, pad: 1}\n"
      "  - roi_align: {rois: 5, size: 7}\n"
      "  - conv: {name: fc6, filters: 16, kernel: 7, stride: 7}\n"));
  EXPECT_EQ(layer_named(w, "roi_align1").output, (Shape{8, 35, 7}));
  EXPECT_EQ(layer_named(w, "fc6").output, (Shape{16, 5, 1}));
  const WorkloadCosts c = compute_costs(w);
  EXPECT_EQ(c.layers[2].params, 0);
  EXPECT_DOUBLE_EQ(c.layers[2].fwd_flops, 32.0 * 8 * 35 * 7);
  EXPECT_DOUBLE_EQ(c.layers[2].bwd_data_flops, 32.0 * 8 * 35 * 7);
  EXPECT_EQ(c.layers[3].params, 16 * 8 * 7 * 7 + 16);  // fc6 over 8 x 7 x 7 per region
  EXPECT_DOUBLE_EQ(c.layers[3].fwd_macs, 5.0 * 16 * 8 * 7 * 7);
}

// A layer that shares a weight shares its bias: both or neither, of the same size.
TEST(ShapeInference, SharedConvsShareTheirBias) {
  const Workload w = load_text(model(
      "  - conv: {name: head, filters: 4, kernel: 3, pad: 1}\n"
      "  - pool: {kind: max, kernel: 2, from: data}\n"
      "  - conv: {name: again, filters: 4, kernel: 3, pad: 1, shares: head}\n"));
  const WorkloadCosts c = compute_costs(w);
  EXPECT_EQ(c.params, 4 * 3 * 3 * 3 + 4);
  EXPECT_EQ(c.tensors.size(), 2u);
  EXPECT_EQ(layer_named(w, "again").shares, 1);
}

}  // namespace
}  // namespace gpuscale::wl
