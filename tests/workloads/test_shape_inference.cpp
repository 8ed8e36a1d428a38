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

}  // namespace
}  // namespace gpuscale::wl
