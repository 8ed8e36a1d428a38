// Bad workload input ends in a one-line ConfigError "FILE:LINE: what is wrong (how to fix)" that
// names the line at fault: shapes that do not fit, unknown layer types and keys, missing fields,
// template mistakes, malformed YAML. Each input is a small file in a temporary folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/test_support.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::wl {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::config_error_of;
using testing::write_temp_file;

// The header takes lines 1-4; the first layer item is line 5.
std::string model(const std::string& layers, const std::string& header_extra = "") {
  return "name: t\ndataset: synthetic\ninput: {channels: 3, height: 8, width: 8}\n" +
         header_extra + "layers:\n" + layers;
}

// A model whose input is 8 token ids (1 channel x 8 positions); layers start at line 5.
std::string ids_model(const std::string& layers) {
  return "name: t\ndataset: synthetic\ninput: {channels: 1, height: 8, width: 1}\nlayers:\n" +
         layers;
}

// The error of loading `text`, checked to be one line naming the file (and line, if given).
std::string error_of(const std::string& text, int line) {
  const std::string path = write_temp_file("bad.yaml", text);
  const std::string message = config_error_of([&] { load_workload(path); });
  EXPECT_THAT(message, StartsWith(path + ":" + std::to_string(line) + ": ")) << message;
  EXPECT_THAT(message, Not(HasSubstr("\n")));
  return message;
}

TEST(WorkloadErrors, ConvLargerThanItsInput) {
  EXPECT_THAT(error_of(model("  - conv: {filters: 4, kernel: 9}\n"), 5),
              AllOf(HasSubstr("conv1"), HasSubstr("kernel 9 is larger than its padded input"),
                    HasSubstr("add pad")));
}

TEST(WorkloadErrors, PoolLargerThanItsInputAfterAConv) {
  EXPECT_THAT(error_of(model("  - conv: {filters: 4, kernel: 5}\n  - pool: {kernel: 6}\n"), 6),
              HasSubstr("pool1"));
}

TEST(WorkloadErrors, ConcatBranchesOfDifferentSizes) {
  const std::string layers =
      "  - concat:\n"
      "      branches:\n"
      "        a: [conv: {filters: 4, kernel: 1}]\n"
      "        b: [conv: {filters: 4, kernel: 3}]\n";
  EXPECT_THAT(error_of(model(layers), 8),
              AllOf(HasSubstr("branch 'b' gives 6x6 but branch 'a' gives 8x8"),
                    HasSubstr("same height and width")));
}

TEST(WorkloadErrors, UnknownLayerTypeSuggestsTheNearest) {
  EXPECT_THAT(error_of(model("  - relu\n  - batchnrom\n"), 6),
              HasSubstr("unknown layer type 'batchnrom' (did you mean 'batchnorm'?)"));
  EXPECT_THAT(error_of(model("  - conv2d: {filters: 4, kernel: 1}\n"), 5),
              HasSubstr("unknown layer type 'conv2d'"));
}

TEST(WorkloadErrors, MissingFieldGivesAnExample) {
  EXPECT_THAT(error_of(model("  - conv: {kernel: 3}\n"), 5),
              AllOf(HasSubstr("lacks 'filters'"), HasSubstr("filters: 64")));
  EXPECT_THAT(error_of("name: t\ndataset: synthetic\nlayers: [relu]\n", 1), HasSubstr("lacks 'input'"));
}

TEST(WorkloadErrors, UnknownKeys) {
  EXPECT_THAT(error_of(model("  - conv: {filters: 4, kernel: 1, strides: 2}\n"), 5),
              HasSubstr("unknown key 'strides' in conv layer (did you mean 'stride'?)"));
  EXPECT_THAT(error_of("name: t\ndataset: synthetic\ninput: {channels: 3, height: 8, width: 8}\n"
                       "layer: [relu]\n", 4),
              HasSubstr("unknown key 'layer'"));
}

TEST(WorkloadErrors, EmbeddingMistakes) {
  EXPECT_THAT(error_of(model("  - embedding: {vocab: 10, dim: 4}\n"), 5),
              AllOf(HasSubstr("embedding1"), HasSubstr("one id per position"),
                    HasSubstr("has 3 channels")));
  EXPECT_THAT(error_of(ids_model("  - embedding: {vocab: 10}\n"), 5),
              AllOf(HasSubstr("lacks 'dim'"), HasSubstr("dim: 512")));
  EXPECT_THAT(error_of(ids_model("  - embedding: {vocab: 10, dim: 4, size: 3}\n"), 5),
              HasSubstr("unknown key 'size' in embedding layer"));
  EXPECT_THAT(error_of(ids_model("  - embedding: {vocab: 0, dim: 4}\n"), 5), HasSubstr("vocab"));
}

TEST(WorkloadErrors, SequenceLayerMistakes) {
  const std::string embed = "  - embedding: {name: embed, vocab: 10, dim: 6}\n";  // line 5
  EXPECT_THAT(error_of(ids_model(embed + "  - attention: {heads: 4}\n"), 6),
              HasSubstr("4 heads must divide its 6 input channels"));
  EXPECT_THAT(
      error_of(ids_model(embed + "  - attention: {heads: 2, memory: embd}\n"), 6),
      AllOf(HasSubstr("memory 'embd' names no earlier layer"), HasSubstr("did you mean 'embed'?")));
  EXPECT_THAT(error_of(ids_model(embed + "  - conv: {filters: 4, kernel: 1}\n"
                                         "  - attention: {heads: 2, memory: embed}\n"),
                       7),
              HasSubstr("its memory 'embed' has 6 channels, its queries 4"));
  EXPECT_THAT(error_of(ids_model(embed + "  - relu: {from: nowhere}\n"), 6),
              HasSubstr("from 'nowhere' names no earlier layer"));
  EXPECT_THAT(error_of(ids_model(embed + "  - conv: {filters: 11, kernel: 1, shares: embed}\n"), 6),
              HasSubstr("cannot share the weight of 'embed' (60 elements against its own 66"));
  EXPECT_THAT(error_of(ids_model(embed + "  - attention: {heads: 2, shares: embed}\n"), 6),
              HasSubstr("unknown key 'shares' in attention layer"));
  EXPECT_THAT(error_of(ids_model(embed + "  - conv: {filters: 10, kernel: 1, shares: embed}\n"), 6),
              HasSubstr("shares the weight of 'embed' but not a bias of the same size"));
  EXPECT_THAT(error_of(ids_model(embed + "  - attention: {score: additive, heads: 2}\n"), 6),
              HasSubstr("additive attention has one head"));
  EXPECT_THAT(error_of(ids_model(embed + "  - attention: {score: additive, fused: true}\n"), 6),
              HasSubstr("additive attention has no fused kernel"));
  EXPECT_THAT(error_of(ids_model(embed + "  - attention: {heads: 2, fused: yes please}\n"), 6),
              HasSubstr("fused"));
  EXPECT_THAT(error_of(ids_model(embed + "  - attention: {score: bilinear}\n"), 6),
              HasSubstr("unknown attention score 'bilinear'"));
  EXPECT_THAT(error_of(ids_model(embed + "  - lstm: {hidden: 4, layers: 2}\n"), 6),
              HasSubstr("unknown key 'layers' in lstm layer"));
  EXPECT_THAT(
      error_of(ids_model(embed + "  - concat: {branches: {a: [], b: {from: nothing}}}\n"), 6),
      HasSubstr("from 'nothing' names no earlier layer"));
  EXPECT_THAT(error_of(model("  - roi_align: {rois: 4}\n"), 5),
              AllOf(HasSubstr("lacks 'size'"), HasSubstr("size: 7")));
}

TEST(WorkloadErrors, BadValues) {
  EXPECT_THAT(error_of(model("  - conv: {filters: -4, kernel: 1}\n"), 5), HasSubstr("filters"));
  EXPECT_THAT(error_of(model("  - pool: {kind: mean, kernel: 2}\n"), 5),
              HasSubstr("unknown pool kind 'mean'"));
  EXPECT_THAT(error_of(model("  - conv: {filters: 6, kernel: 1, groups: 4}\n"), 5),
              HasSubstr("groups 4 must divide"));
  EXPECT_THAT(error_of(model("  - pixel_shuffle: {factor: 2}\n"), 5),
              HasSubstr("channels divisible by 4"));
  EXPECT_THAT(error_of(ids_model("  - embedding: {vocab: 9, dim: 8}\n"
                                 "  - attention: {heads: 4, kv_heads: 3}\n"), 6),
              HasSubstr("3 kv_heads must divide its 4 heads"));
  EXPECT_THAT(error_of(model("  - glu\n"), 5),
              HasSubstr("glu gates one half of its channels with the other and needs an even "
                        "count, its input has 3"));
  EXPECT_THAT(error_of(model("  - relu\n", "precision: fp64\n"), 4),
              HasSubstr("unknown precision 'fp64'"));
  EXPECT_THAT(error_of("name: t\ndataset: imagenett\ninput: {channels: 3, height: 8, width: 8}\n"
                       "layers: [relu]\n", 2),
              HasSubstr("unknown dataset 'imagenett' (did you mean 'imagenet'?)"));
}

TEST(WorkloadErrors, ResidualShapeChangeNeedsAProjection) {
  EXPECT_THAT(error_of(model("  - residual: {body: [conv: {filters: 8, kernel: 1}]}\n"), 5),
              AllOf(HasSubstr("3x8x8 into 8x8x8"), HasSubstr("needs a 'projection'")));
  EXPECT_THAT(error_of(model("  - residual:\n      body: [conv: {filters: 8, kernel: 1}]\n"
                             "      projection: [conv: {filters: 4, kernel: 1}]\n"), 7),
              HasSubstr("projection 'projection' gives 4x8x8 but the residual body gives 8x8x8"));
}

TEST(WorkloadErrors, TemplateArguments) {
  const std::string templates =
      "templates:\n"
      "  unit:\n"
      "    args: [width]\n"
      "    layers: [conv: {filters: $width, kernel: 1}]\n";  // lines 4-7; layers from line 9
  EXPECT_THAT(error_of(model("  - block: {template: unit}\n", templates), 9),
              HasSubstr("needs argument 'width'"));
  EXPECT_THAT(error_of(model("  - block: {template: unit, args: {width: 2, widht: 3}}\n", templates), 9),
              HasSubstr("takes no argument 'widht'"));
  EXPECT_THAT(error_of(model("  - block: {template: unti, args: {width: 2}}\n", templates), 9),
              HasSubstr("unknown template 'unti' (did you mean 'unit'?)"));
  EXPECT_THAT(error_of(model("  - conv: {filters: $channels, kernel: 1}\n"), 5),
              HasSubstr("unknown argument '$channels'"));
  // An argument's bad value is blamed where it is given.
  EXPECT_THAT(error_of(model("  - block: {template: unit, args: {width: wide}}\n", templates), 9),
              HasSubstr("'wide' is not a whole number"));
}

TEST(WorkloadErrors, DuplicateNames) {
  EXPECT_THAT(error_of(model("  - relu: {name: act}\n  - relu: {name: act}\n"), 6),
              HasSubstr("two layers are named 'act'"));
}

TEST(WorkloadErrors, MalformedYamlAndMissingFiles) {
  EXPECT_THAT(error_of(model("  - conv: {filters: 4, kernel: 1\n"), 6), HasSubstr(""));
  EXPECT_THAT(config_error_of([] { load_workload("no/such/model.yaml"); }),
              HasSubstr("no/such/model.yaml: no such file"));
  EXPECT_THAT(config_error_of([] { load_workload("resnet50"); }),
              HasSubstr("unknown workload 'resnet50' (did you mean 'resnet-50'?)"));
}

TEST(WorkloadErrors, ADatasetPathIsTakenFromTheWorkloadFilesFolder) {
  write_temp_file("tiny-dataset.yaml", "name: tiny\nsamples: 0\n");
  const std::string path = write_temp_file(
      "with-dataset.yaml", "name: t\ndataset: tiny-dataset.yaml\ninput: {channels: 3, height: 8, "
                           "width: 8}\nlayers:\n  - relu\n");
  const Workload w = load_workload(path);
  EXPECT_EQ(w.dataset, (std::filesystem::path(path).parent_path() / "tiny-dataset.yaml").string());
  // A missing one is blamed at the dataset line, with the path it was looked for at.
  const std::string missing = write_temp_file(
      "missing-dataset.yaml", "name: t\ndataset: nowhere.yaml\ninput: {channels: 3, height: 8, "
                              "width: 8}\nlayers:\n  - relu\n");
  EXPECT_THAT(config_error_of([&] { load_workload(missing); }),
              StartsWith(missing + ":2: no dataset file '" +
                         (std::filesystem::path(path).parent_path() / "nowhere.yaml").string()));
}

TEST(WorkloadErrors, TemplatesAndArgumentsThatDoNotExistSayHowToAddThem) {
  EXPECT_THAT(error_of(model("  - block: {template: basic}\n"), 5),
              HasSubstr("unknown template 'basic' (the file defines no templates: add it under "
                        "'templates:')"));
  EXPECT_THAT(error_of(model("  - conv: {filters: $width, kernel: 1}\n"), 5),
              HasSubstr("unknown argument '$width' (declare it"));
}

TEST(WorkloadErrors, OverrideOfAnUnknownArgumentBlamesTheOption) {
  EXPECT_THAT(config_error_of([] { load_workload("resnet-50", {"args.stage5_blocks=3"}); }),
              AllOf(StartsWith("--set args.stage5_blocks=3"), Not(HasSubstr("\n"))));
}

}  // namespace
}  // namespace gpuscale::wl
