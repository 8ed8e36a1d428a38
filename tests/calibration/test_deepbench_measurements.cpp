// DeepBench shapes timed on another GPU (calibration/src/deepbench_measurements.hpp): the file the
// calibration tool writes reads back equal, and is as strict as every gpuscale file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "calibration/src/deepbench_measurements.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale::calib {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using testing::config_error_of;
using testing::write_temp_file;

DeepBenchMeasurements sample() {
  DeepBenchMeasurements m;
  m.header.gpu = "H200-SXM";
  m.header.driver = "580.159.04";
  m.header.cuda = "13.0";
  m.header.cudnn = "9.13.0";
  m.header.framework = "gpuscale-calibrate 0.1 (cuDNN and cuBLAS calls, no framework)";
  compute::Microbenchmarks& micro = m.header.microbenchmarks.emplace();
  micro.launch_overhead = {2.104e-6};
  micro.device_copy_bandwidth = {4300e9};
  micro.host_to_device = {55e9};
  micro.device_to_host = {55e9};
  m.precision = compute::Precision::tensor;
  m.shapes_file = "results_fp16_mixed.csv";
  MeasuredGemm g;
  g.shape = {5, "", 1760, 16, 1760, false, true, {}};
  g.time = {{12.5e-6}, {0.2e-6}, "CUBLAS_GEMM_DEFAULT_TENSOR_OP"};
  m.gemms.push_back(g);
  MeasuredConv input;  // an input layer: no backward-data
  input.shape.line = 200;
  input.shape.w = 700;
  input.shape.h = 161;
  input.shape.c = 1;
  input.shape.n = 4;
  input.shape.k = 32;
  input.shape.s = 20;
  input.shape.r = 5;
  input.shape.stride_w = input.shape.stride_h = 2;
  input.shape.p = 341;
  input.shape.q = 79;
  input.forward = {{31.007e-6}, {0.5e-6}, "IMPLICIT_GEMM"};
  input.backward_weights = {{70e-6}, {1e-6}, ""};
  m.convs.push_back(input);
  MeasuredConv inner = input;
  inner.shape.line = 201;
  inner.shape.c = 32;
  inner.shape.pad_w = inner.shape.pad_h = 1;
  inner.shape.p = 342;
  inner.shape.q = 80;
  inner.backward_data = TimedCall{{44.5e-6}, {0.75e-6}, "ALGO_1"};
  m.convs.push_back(inner);
  return m;
}

void expect_calls_equal(const TimedCall& a, const TimedCall& b, const std::string& where) {
  EXPECT_NEAR(a.median.value, b.median.value, 1e-13) << where;
  EXPECT_NEAR(a.spread.value, b.spread.value, 1e-13) << where;
  EXPECT_EQ(a.algorithm, b.algorithm) << where;
}

TEST(DeepBenchMeasurements, WrittenFileReadsBackEqual) {
  const DeepBenchMeasurements written = sample();
  const std::string text = deepbench_measurements_to_yaml(written);
  const DeepBenchMeasurements read =
      load_deepbench_measurements(write_temp_file("deepbench-tensor.yaml", text));
  EXPECT_EQ(read.header.gpu, "H200-SXM");
  EXPECT_EQ(read.header.framework, written.header.framework);
  ASSERT_TRUE(read.header.microbenchmarks.has_value());
  EXPECT_NEAR(read.header.microbenchmarks->launch_overhead.value, 2.104e-6, 1e-13);
  EXPECT_EQ(read.precision, compute::Precision::tensor);
  EXPECT_EQ(read.shapes_file, "results_fp16_mixed.csv");

  ASSERT_EQ(read.gemms.size(), 1u);
  const DeepBenchGemm& g = read.gemms[0].shape;
  EXPECT_EQ(g.line, 5);
  EXPECT_EQ(g.m, 1760);
  EXPECT_EQ(g.n, 16);
  EXPECT_EQ(g.k, 1760);
  EXPECT_FALSE(g.a_transposed);
  EXPECT_TRUE(g.b_transposed);
  expect_calls_equal(read.gemms[0].time, written.gemms[0].time, "gemm");

  ASSERT_EQ(read.convs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const MeasuredConv &a = written.convs[i], &b = read.convs[i];
    const std::string where = "conv " + std::to_string(a.shape.line);
    EXPECT_EQ(b.shape.line, a.shape.line);
    EXPECT_EQ(std::tie(b.shape.w, b.shape.h, b.shape.c, b.shape.n, b.shape.k, b.shape.s,
                       b.shape.r, b.shape.pad_w, b.shape.pad_h, b.shape.stride_w, b.shape.stride_h),
              std::tie(a.shape.w, a.shape.h, a.shape.c, a.shape.n, a.shape.k, a.shape.s,
                       a.shape.r, a.shape.pad_w, a.shape.pad_h, a.shape.stride_w, a.shape.stride_h))
        << where;
    EXPECT_EQ(b.shape.p, a.shape.p) << where;  // the output follows from the shape
    EXPECT_EQ(b.shape.q, a.shape.q) << where;
    expect_calls_equal(a.forward, b.forward, where + " forward");
    ASSERT_EQ(a.backward_data.has_value(), b.backward_data.has_value()) << where;
    if (a.backward_data) expect_calls_equal(*a.backward_data, *b.backward_data, where);
    expect_calls_equal(a.backward_weights, b.backward_weights, where + " backward_weights");
  }
  // The layout of docs/calibration.md, and the same bytes when written again.
  EXPECT_THAT(text, HasSubstr("\nshapes_file: results_fp16_mixed.csv\ngemm:\n  - {line: 5, m: 1760, "
                              "n: 16, k: 1760, a_transposed: false, b_transposed: true,\n"
                              "     time: {median: 12.5 us, spread: 0.2 us, algorithm: "
                              "CUBLAS_GEMM_DEFAULT_TENSOR_OP}}\n"));
  EXPECT_THAT(text, HasSubstr("     backward_weights: {median: 70 us, spread: 1 us}}\n"));
  EXPECT_EQ(deepbench_measurements_to_yaml(read), text);
}

std::string error_for(const std::string& name, const std::string& from, const std::string& to) {
  std::string text = deepbench_measurements_to_yaml(sample());
  const auto at = text.find(from);
  if (at == std::string::npos) return "<'" + from + "' is not in the text>";
  text.replace(at, from.size(), to);
  const std::string path = write_temp_file(name, text);
  return config_error_of([&] { load_deepbench_measurements(path); });
}

TEST(DeepBenchMeasurements, BadInputIsReportedAtItsLine) {
  // Lines: 15 the gemm row (its time on 16), 18 conv line 200, 21 conv line 201.
  EXPECT_THAT(error_for("d1.yaml", "{median: 12.5 us", "{medain: 12.5 us"),
              MatchesRegex(".*d1.yaml:16: unknown key 'medain' in time of gemm of line 5 \\(did "
                           "you mean 'median'\\?\\)"));
  EXPECT_THAT(error_for("d2.yaml", "b_transposed: true", "b_transposed: yes"),
              MatchesRegex(".*d2.yaml:15: b_transposed of gemm of line 5 'yes' must be true or "
                           "false"));
  EXPECT_THAT(error_for("d3.yaml", "line: 201", "line: 200"),
              MatchesRegex(".*d3.yaml:21: DeepBench line 200 is measured twice.*"));
  EXPECT_THAT(error_for("d4.yaml", "precision: tensor", "precision: fp16"),
              MatchesRegex(".*d4.yaml:12: unknown precision 'fp16'.*"));
  EXPECT_THAT(error_for("d5.yaml", "spread: 0.2 us", "spread: 0.2"),
              MatchesRegex(".*d5.yaml:16: spread of time of gemm of line 5: time '0.2' has no "
                           "unit.*"));
  EXPECT_THAT(error_for("d6.yaml", "s: 20, r: 5", "s: 800, r: 5"),
              MatchesRegex(".*d6.yaml:18: conv of line 200: the filter is larger than the padded "
                           "input.*"));
  EXPECT_THAT(error_for("d7.yaml", "w: 700, h: 161, c: 1,", "w: 700, h: 161,"),
              MatchesRegex(".*d7.yaml:18: conv of line 200 lacks 'c'.*"));
}

}  // namespace
}  // namespace gpuscale::calib
