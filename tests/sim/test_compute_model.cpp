// The compute-time model: the analytic formula's closed forms, GPU specs, the analytic
// constants, measured profiles and their interpolation, and the analytic model against
// DeepBench's V100 kernel times (docs/compute-model.md), whose derivation of the shipped
// constants is recomputed here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <vector>

#include "calibration/src/deepbench.hpp"
#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"
#include "sim/compute/profile.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale::compute {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using testing::config_error_of;
using testing::write_temp_file;

// --- Closed forms -----------------------------------------------------------------------------

// A round-number GPU: 10 TFLOP/s fp32, 1000 GB/s of which a copy reaches half.
GpuSpec toy_gpu() {
  GpuSpec g;
  g.name = "toy";
  g.memory_bandwidth = {1000e9};
  g.copy_efficiency = 0.5;
  g.peak_fp32 = {10e12};
  g.peak_fp16 = {20e12};
  return g;
}

AnalyticParams toy_params() {
  AnalyticParams a;
  a.launch_overhead = {5e-6};
  a.framework_overhead = {20e-6};
  for (auto& row : a.compute_efficiency) row.fill(0.5);
  a.memory_efficiency.fill(0.8);
  return a;
}

TEST(AnalyticModel, ComputeBoundKernelTakesFlopsOverEffectivePeakPlusLaunch) {
  const KernelWork work{KernelClass::gemm, 1e10, 1e3};
  const double expected = 1e10 / (10e12 * 0.5) + 5e-6;
  EXPECT_DOUBLE_EQ(analytic_kernel_time(toy_gpu(), toy_params(), work, Precision::fp32).value,
                   expected);
  // fp16 doubles the peak, halves the compute part.
  EXPECT_DOUBLE_EQ(analytic_kernel_time(toy_gpu(), toy_params(), work, Precision::fp16).value,
                   1e10 / (20e12 * 0.5) + 5e-6);
}

TEST(AnalyticModel, MemoryBoundKernelTakesBytesOverEffectiveBandwidthPlusLaunch) {
  const KernelWork work{KernelClass::elementwise, 1e6, 1e9};
  EXPECT_DOUBLE_EQ(analytic_kernel_time(toy_gpu(), toy_params(), work, Precision::fp32).value,
                   1e9 / (1000e9 * 0.5 * 0.8) + 5e-6);
}

TEST(AnalyticModel, CrossoverIsAtTheRidgeIntensity) {
  // Effective peak 5e12 FLOP/s, effective bandwidth 4e11 B/s: ridge at 12.5 FLOP/B.
  const double ridge = (10e12 * 0.5) / (1000e9 * 0.5 * 0.8);
  const double bytes = 1e8;
  auto time_at = [&](double intensity) {
    return analytic_kernel_time(toy_gpu(), toy_params(),
                                {KernelClass::gemm, intensity * bytes, bytes}, Precision::fp32)
        .value;
  };
  const double memory_time = bytes / 4e11 + 5e-6;
  EXPECT_DOUBLE_EQ(time_at(ridge / 2), memory_time);  // below the ridge: flat in FLOPs
  EXPECT_DOUBLE_EQ(time_at(ridge), memory_time);      // at the ridge: both terms equal
  EXPECT_NEAR(time_at(ridge * 2), 2 * (memory_time - 5e-6) + 5e-6, 1e-15);  // compute-bound
}

TEST(AnalyticModel, LaunchOverheadPerKernelAndFrameworkOverheadOncePerLayer) {
  const std::vector<KernelWork> kernels{{KernelClass::gemm, 1e10, 0},
                                        {KernelClass::elementwise, 0, 1e9}};
  const double gemm = 1e10 / 5e12, elementwise = 1e9 / 4e11;
  EXPECT_NEAR(analytic_layer_time(toy_gpu(), toy_params(), kernels, Precision::fp32).value,
              gemm + elementwise + 2 * 5e-6 + 20e-6, 1e-15);
  EXPECT_DOUBLE_EQ(analytic_layer_time(toy_gpu(), toy_params(), {}, Precision::fp32).value, 20e-6);
}

TEST(AnalyticModel, TensorPrecisionOnAGpuWithoutTensorCoresIsAConfigError) {
  EXPECT_THAT(config_error_of([] {
                analytic_kernel_time(toy_gpu(), toy_params(), {KernelClass::gemm, 1, 1},
                                     Precision::tensor);
              }),
              HasSubstr("no Tensor Cores"));
}

TEST(ConvWork, FlopsBytesAndClassFollowTheShape) {
  ConvShape s;  // 1 image, 2 channels, 5x5, 3 filters of 3x3, pad 1: output 5x5
  s.in_channels = 2;
  s.in_height = s.in_width = 5;
  s.out_channels = 3;
  s.filter_height = s.filter_width = 3;
  s.pad_height = s.pad_width = 1;
  const KernelWork w = conv_kernel_work(s, TrainingPass::forward, Precision::fp32);
  EXPECT_EQ(s.out_height(), 5);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 1 * 3 * 2 * 3 * 3 * 5 * 5);
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (2 * 25 + 3 * 2 * 9 + 3 * 25));
  EXPECT_EQ(w.kind, KernelClass::conv_forward_winograd);
  EXPECT_DOUBLE_EQ(conv_kernel_work(s, TrainingPass::backward_data, Precision::tensor).bytes,
                   w.bytes / 2);
  EXPECT_EQ(conv_kernel_class(s, TrainingPass::backward_weights),
            KernelClass::conv_backward_weights_winograd);
  s.stride_height = s.stride_width = 2;
  EXPECT_EQ(conv_kernel_class(s, TrainingPass::forward), KernelClass::conv_forward);
  s.stride_height = s.stride_width = 1;
  s.filter_height = s.filter_width = 1;
  s.pad_height = s.pad_width = 0;
  EXPECT_EQ(conv_kernel_class(s, TrainingPass::backward_data), KernelClass::conv_backward_data);
  s.filter_height = 9;  // taller than the padded input
  EXPECT_THROW(conv_kernel_work(s, TrainingPass::forward, Precision::fp32), std::invalid_argument);
}

// --- GPU specs ----------------------------------------------------------------------------------

constexpr const char* kGoodSpec = R"(name: Test-GPU
memory: 16 GB
memory_bandwidth: 900 GB/s
copy_efficiency: 0.867
sm_count: 80
boost_clock: 1530 MHz
peak:
  fp32: 15.7 TFLOP/s
  fp16: 31.4 TFLOP/s
)";

std::string spec_with(const std::string& from, const std::string& to) {
  std::string text = kGoodSpec;
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(GpuSpec, ShippedModelsLoadAndTopologyModelsResolve) {
  for (const std::string& name : shipped_gpus().names()) {
    SCOPED_TRACE(name);
    const GpuSpec g = load_gpu_spec(name);
    EXPECT_GT(g.peak_fp32.value, 0);
    EXPECT_GE(g.peak_fp16.value, g.peak_fp32.value);
  }
  for (const char* model : {"V100-SXM2", "V100-PCIe", "P100-SXM2", "A100-SXM4-40GB", "H200-SXM"}) {
    EXPECT_EQ(load_gpu_spec(model).name, model);
  }
  const GpuSpec v100 = load_gpu_spec("V100-SXM2");
  EXPECT_DOUBLE_EQ(v100.peak(Precision::fp32).value, 15.7e12);
  EXPECT_DOUBLE_EQ(v100.peak(Precision::tensor).value, 125e12);
  EXPECT_DOUBLE_EQ(v100.memory_bandwidth.value, 900e9);
  EXPECT_NEAR(v100.copy_bandwidth().value, 780e9, 1e9);
  EXPECT_EQ(v100.sm_count, 80);
  EXPECT_FALSE(load_gpu_spec("p100-sxm2").peak_tensor.has_value());
}

TEST(GpuSpec, AFileByPathLoads) {
  const GpuSpec g = load_gpu_spec(write_temp_file("good-gpu.yaml", kGoodSpec));
  EXPECT_EQ(g.name, "Test-GPU");
  EXPECT_DOUBLE_EQ(g.boost_clock.value, 1530e6);
}

TEST(GpuSpec, UnknownModelListsTheShippedOnes) {
  const std::string msg = config_error_of([] { load_gpu_spec("V100-SXM3"); });
  EXPECT_THAT(msg, HasSubstr("unknown GPU model 'v100-sxm3'"));
  EXPECT_THAT(msg, HasSubstr("did you mean 'v100-sxm2'?"));
  EXPECT_THAT(config_error_of([] { load_gpu_spec("TPU"); }), HasSubstr("h200-sxm"));
}

TEST(GpuSpec, BadInputIsReportedAtItsLine) {
  const std::string unknown_key = write_temp_file(
      "typo-gpu.yaml", spec_with("memory_bandwidth:", "memory_bandwith:"));
  EXPECT_THAT(config_error_of([&] { load_gpu_spec(unknown_key); }),
              MatchesRegex(".*typo-gpu.yaml:3: unknown key 'memory_bandwith' in GPU spec "
                           "\\(did you mean 'memory_bandwidth'\\?\\)"));

  const std::string zero = write_temp_file("zero-gpu.yaml", spec_with("900 GB/s", "0 GB/s"));
  EXPECT_THAT(config_error_of([&] { load_gpu_spec(zero); }),
              MatchesRegex(".*zero-gpu.yaml:3: memory_bandwidth of GPU Test-GPU must be positive.*"));

  const std::string negative = write_temp_file("neg-gpu.yaml", spec_with("900 GB/s", "-900 GB/s"));
  EXPECT_THAT(config_error_of([&] { load_gpu_spec(negative); }),
              MatchesRegex(".*neg-gpu.yaml:3: .*is negative.*"));

  const std::string bare = write_temp_file("bare-gpu.yaml", spec_with("15.7 TFLOP/s", "15.7"));
  EXPECT_THAT(config_error_of([&] { load_gpu_spec(bare); }),
              MatchesRegex(".*bare-gpu.yaml:8: fp32 peak of GPU Test-GPU: .*has no unit.*"));

  const std::string zero_peak = write_temp_file("zpeak-gpu.yaml", spec_with("15.7 TFLOP/s", "0 TFLOPS"));
  EXPECT_THAT(config_error_of([&] { load_gpu_spec(zero_peak); }),
              MatchesRegex(".*zpeak-gpu.yaml:8: .*must be positive.*"));

  const std::string efficiency = write_temp_file("eff-gpu.yaml", spec_with("0.867", "87"));
  EXPECT_THAT(config_error_of([&] { load_gpu_spec(efficiency); }),
              MatchesRegex(".*eff-gpu.yaml:4: copy_efficiency of GPU Test-GPU is 87, outside.*"));

  const std::string missing = write_temp_file("nopeak-gpu.yaml", spec_with("  fp16: 31.4 TFLOP/s\n", ""));
  EXPECT_THAT(config_error_of([&] { load_gpu_spec(missing); }),
              MatchesRegex(".*nopeak-gpu.yaml:8: peak of GPU Test-GPU lacks 'fp16'.*"));

  EXPECT_THAT(config_error_of([] { load_gpu_spec("/no/such/gpu.yaml"); }),
              HasSubstr("/no/such/gpu.yaml: no such file"));
}

// --- Analytic constants -------------------------------------------------------------------------

TEST(AnalyticParams, ShippedConstantsLoad) {
  const AnalyticParams a = load_analytic_params(shipped_analytic_params_path());
  EXPECT_DOUBLE_EQ(a.launch_overhead.value, 8e-6);
  EXPECT_GT(a.framework_overhead.value, 0);
  EXPECT_GT(a.compute(KernelClass::conv_forward_winograd, Precision::fp32), 1.0);
}

TEST(AnalyticParams, EveryClassIsRequiredAndUnknownOnesAreRejected) {
  const std::string table =
      "{conv_forward: 0.6, conv_backward_data: 0.5, conv_backward_weights: 0.4, "
      "conv_forward_winograd: 1.2, conv_backward_data_winograd: 1.2, "
      "conv_backward_weights_winograd: 1.3, gemm: 0.8, elementwise: 1}";
  const std::string good = "name: t\nlaunch_overhead: 8 us\nframework_overhead: 20 us\n"
                           "compute_efficiency:\n  fp32: " + table + "\n  fp16: " + table +
                           "\n  tensor: " + table + "\nmemory_efficiency: " + table + "\n";
  EXPECT_NO_THROW(load_analytic_params(write_temp_file("params.yaml", good)));

  std::string typo = good;
  typo.replace(typo.rfind("gemm:"), 5, "gem:");
  EXPECT_THAT(config_error_of([&] { load_analytic_params(write_temp_file("typo.yaml", typo)); }),
              MatchesRegex(".*typo.yaml:8: unknown key 'gem' in memory_efficiency \\(did you "
                           "mean 'gemm'\\?\\)"));

  std::string bare = good;
  bare.replace(bare.find("8 us"), 4, "8");
  EXPECT_THAT(config_error_of([&] { load_analytic_params(write_temp_file("bare.yaml", bare)); }),
              MatchesRegex(".*bare.yaml:2: launch_overhead: time '8' has no unit.*"));
}

// --- Measured profiles --------------------------------------------------------------------------

constexpr const char* kProfile = R"(gpu: V100-SXM2
driver: "418.67"
cuda: "10.1"
cudnn: "7.6.2"
framework: MXNet 1.2.0 (NGC 18.04)
precision: fp32
workload: toy
source: made up for the test
layers:
  conv1:
    16: {forward: 1 ms, backward_data: 0 us, backward_weights: 2 ms}
    32: {forward: 1.8 ms, backward_data: 0 us, backward_weights: 3.6 ms}
    64: {forward: 3.4 ms, backward_data: 0 us, backward_weights: 7 ms}
  fc:
    32: {forward: 100 us, backward_data: 120 us, backward_weights: 110 us}
)";

TEST(Profile, LoadsAndInterpolatesBetweenBatches) {
  const MeasuredProfile p = load_profile(write_temp_file("profile.yaml", kProfile));
  EXPECT_EQ(p.header.gpu, "V100-SXM2");
  EXPECT_EQ(p.header.driver, "418.67");
  EXPECT_EQ(p.precision, Precision::fp32);
  ASSERT_EQ(p.layers.size(), 2u);
  EXPECT_EQ(p.layers[0].name, "conv1");

  const auto fwd = [&](long batch) { return p.time("conv1", TrainingPass::forward, batch).value; };
  EXPECT_DOUBLE_EQ(fwd(32), 1.8e-3);                           // measured
  EXPECT_DOUBLE_EQ(fwd(24), 1.4e-3);                           // halfway between 16 and 32
  EXPECT_DOUBLE_EQ(fwd(48), 2.6e-3);                           // halfway between 32 and 64
  EXPECT_DOUBLE_EQ(fwd(128), 6.8e-3);                          // proportional above 64
  EXPECT_DOUBLE_EQ(fwd(8), 1e-3);                              // the smallest below 16
  EXPECT_DOUBLE_EQ(p.time("conv1", TrainingPass::backward_weights, 40).value, 4.45e-3);
  EXPECT_DOUBLE_EQ(p.time("fc", TrainingPass::backward_data, 64).value, 240e-6);
  EXPECT_DOUBLE_EQ(p.time("fc", TrainingPass::backward_data, 1).value, 120e-6);
}

TEST(Profile, UnknownLayerNamesTheKnownOnes) {
  const MeasuredProfile p = load_profile(write_temp_file("profile.yaml", kProfile));
  EXPECT_THAT(config_error_of([&] { p.time("conv2", TrainingPass::forward, 32); }),
              HasSubstr("unknown layer 'conv2' (did you mean 'conv1'?)"));
}

TEST(Profile, BadInputIsReportedAtItsLine) {
  auto error_for = [](const std::string& name, const std::string& from, const std::string& to) {
    std::string text = kProfile;
    text.replace(text.find(from), from.size(), to);
    const std::string path = write_temp_file(name, text);
    return config_error_of([&] { load_profile(path); });
  };
  EXPECT_THAT(error_for("p1.yaml", "    32: {forward: 1.8", "    3x: {forward: 1.8"),
              MatchesRegex(".*p1.yaml:12: layer conv1: '3x' is not a batch size.*"));
  EXPECT_THAT(error_for("p2.yaml", "{forward: 100 us", "{foward: 100 us"),
              MatchesRegex(".*p2.yaml:15: unknown key 'foward' in layer fc at batch 32 \\(did "
                           "you mean 'forward'\\?\\)"));
  EXPECT_THAT(error_for("p3.yaml", "forward: 1 ms", "forward: 1"),
              MatchesRegex(".*p3.yaml:11: forward of layer conv1 at batch 16: time '1' has no unit.*"));
  EXPECT_THAT(error_for("p4.yaml", "precision: fp32", "precision: fp31"),
              MatchesRegex(".*p4.yaml:6: unknown precision 'fp31' \\(did you mean 'fp32'\\?\\)"));
  EXPECT_THAT(error_for("p5.yaml", "cudnn:", "cudn:"),
              MatchesRegex(".*p5.yaml:4: unknown key 'cudn' in measured profile.*"));
}

// --- DeepBench: the analytic model against measured V100 kernels -----------------------------

const std::string kDeepBenchDir = GPUSCALE_DEEPBENCH_DIR;

#define SKIP_WITHOUT_DEEPBENCH()                                                              \
  if (!std::filesystem::is_regular_file(kDeepBenchDir + "/results_fp32.csv")) {              \
    GTEST_SKIP() << "DeepBench V100 data not found at " << kDeepBenchDir                      \
                 << " (../shared/data/deepbench-v100 beside the source tree)";                \
  }

// One measured kernel: what the model is given and what DeepBench measured.
struct Measured {
  KernelWork work;
  double seconds = 0;
};

std::vector<Measured> conv_kernels(const calib::DeepBenchResults& db, Precision precision) {
  std::vector<Measured> out;
  for (const auto& c : db.convs) {
    const ConvShape s = calib::conv_shape(c);
    out.push_back({conv_kernel_work(s, TrainingPass::forward, precision), c.forward.value});
    if (c.backward_data) {
      out.push_back({conv_kernel_work(s, TrainingPass::backward_data, precision),
                     c.backward_data->value});
    }
    out.push_back({conv_kernel_work(s, TrainingPass::backward_weights, precision),
                   c.backward_weights.value});
  }
  return out;
}

std::vector<Measured> gemm_kernels(const calib::DeepBenchResults& db, Precision precision) {
  std::vector<Measured> out;
  for (const auto& g : db.gemms) {
    out.push_back({gemm_kernel_work(g.m, g.n, g.k, precision), g.time.value});
  }
  return out;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(pos);
  const double next = v[std::min(i + 1, v.size() - 1)];
  return v[i] + (next - v[i]) * (pos - static_cast<double>(i));
}

double median(const std::vector<double>& v) { return quantile(v, 0.5); }

struct Data {
  calib::DeepBenchResults fp32, mixed;
  GpuSpec v100;
};

const Data& data() {
  static const Data d{calib::read_deepbench_csv(kDeepBenchDir + "/results_fp32.csv"),
                      calib::read_deepbench_csv(kDeepBenchDir + "/results_fp16_mixed.csv"),
                      load_gpu_spec("V100-SXM2")};
  return d;
}

// The derivation of analytic-v100.yaml, as docs/compute-model.md states it.
struct Derived {
  double launch_overhead = 0;
  std::map<std::pair<KernelClass, Precision>, std::pair<double, int>> compute;  // value, rows
  std::pair<double, int> gemm_memory;
};

Derived derive() {
  const Data& d = data();
  std::map<Precision, std::vector<Measured>> kernels;
  for (auto [p, db] : {std::pair{Precision::fp32, &d.fp32}, std::pair{Precision::tensor, &d.mixed}}) {
    kernels[p] = conv_kernels(*db, p);
    const auto g = gemm_kernels(*db, p);
    kernels[p].insert(kernels[p].end(), g.begin(), g.end());
  }
  Derived out;
  // 1. The smallest per-call time measured, in either file.
  out.launch_overhead = 1e9;
  for (const auto& [p, ks] : kernels) {
    for (const auto& k : ks) out.launch_overhead = std::min(out.launch_overhead, k.seconds);
  }
  const double launch = out.launch_overhead, copy_bw = d.v100.copy_bandwidth().value;
  // 2. Compute efficiency: median over the class's compute-bound rows (intensity at or above
  //    the V100's ridge) of FLOPs / ((time - launch) x peak).
  for (const auto& [p, ks] : kernels) {
    const double peak = d.v100.peak(p).value, ridge = peak / copy_bw;
    std::map<KernelClass, std::vector<double>> by_class;
    for (const auto& k : ks) {
      if (k.work.flops / k.work.bytes >= ridge && k.seconds > launch) {
        by_class[k.work.kind].push_back(k.work.flops / ((k.seconds - launch) * peak));
      }
    }
    for (const auto& [c, v] : by_class) out.compute[{c, p}] = {median(v), static_cast<int>(v.size())};
  }
  // 3. Memory efficiency: median over the FP32 GEMM rows below the ridge of
  //    bytes / ((time - launch) x copy bandwidth).
  std::vector<double> memory;
  const double ridge32 = d.v100.peak_fp32.value / copy_bw;
  for (const auto& k : kernels[Precision::fp32]) {
    if (k.work.kind == KernelClass::gemm && k.work.flops / k.work.bytes < ridge32 &&
        k.seconds > launch) {
      memory.push_back(k.work.bytes / ((k.seconds - launch) * copy_bw));
    }
  }
  out.gemm_memory = {median(memory), static_cast<int>(memory.size())};
  return out;
}

struct ErrorStats {
  int n = 0;
  double median_abs = 0, p90_abs = 0, median_signed = 0;
};

ErrorStats errors(const std::vector<Measured>& kernels, Precision precision,
                  const AnalyticParams& params) {
  std::vector<double> signed_errors, abs_errors;
  for (const auto& k : kernels) {
    const double model = analytic_kernel_time(data().v100, params, k.work, precision).value;
    signed_errors.push_back((model - k.seconds) / k.seconds);
    abs_errors.push_back(std::abs(signed_errors.back()));
  }
  return {static_cast<int>(kernels.size()), median(abs_errors), quantile(abs_errors, 0.9),
          median(signed_errors)};
}

void print(const char* what, const ErrorStats& e) {
  std::printf("%-28s n=%3d  |rel err| median %.3f  p90 %.3f  signed median %+.3f\n", what, e.n,
              e.median_abs, e.p90_abs, e.median_signed);
}

TEST(DeepBench, ReadsEveryGemmAndConvolutionRow) {
  SKIP_WITHOUT_DEEPBENCH();
  const auto& fp32 = data().fp32;
  EXPECT_EQ(fp32.precision, "Float");
  EXPECT_EQ(fp32.gemms.size(), 160u);
  EXPECT_EQ(fp32.convs.size(), 94u);
  EXPECT_EQ(std::count_if(fp32.convs.begin(), fp32.convs.end(),
                          [](const auto& c) { return !c.backward_data; }),
            10);
  const auto& first = fp32.convs.front();  // DeepSpeech 700x161x1, 32 filters of 20x5, stride 2
  EXPECT_EQ(first.w, 700);
  EXPECT_EQ(first.s, 20);
  EXPECT_EQ(first.p, 341);
  EXPECT_DOUBLE_EQ(first.forward.value, 0.078e-3);
  EXPECT_EQ(first.forward_algorithm, "IMPLICIT_GEMM");
  EXPECT_EQ(data().mixed.precision, "16 bit inputs, 16 bit multiplication, 32 bit addition");
  EXPECT_EQ(data().mixed.convs.size(), 94u);
}

TEST(DeepBench, ShiftedColumnsAreReportedAtTheirLine) {
  const std::string path = write_temp_file(
      "deepbench.csv",
      "Precision,Float\r\nConvolution\r\n,,W,H,C,N,K ,S (Filter width),R (Filter height),pad_w,"
      "pad_h,Horizontal stride,Vertical stride,Forward (msec),wrt Inputs (msec),wrt Parameters "
      "(msec),,P,Q,Total Time (msec),FWD TERAFLOPS,BWD INPUTS TERAFLOPS,BWD PARMS TERAFLOPS,"
      "Forward Algorithm\r\n,OCR,480,48,1,16,16,3,3,1,1,1,1,0.056,N/A*,0.166,,48,480,0.222,1,,1,"
      "IMPLICIT_GEMM\r\n");
  EXPECT_THAT(config_error_of([&] { calib::read_deepbench_csv(path); }),
              MatchesRegex(".*deepbench.csv:4: output size 48x480 does not follow.*"));
  EXPECT_THAT(config_error_of([] { calib::read_deepbench_csv("/no/such.csv"); }),
              HasSubstr("/no/such.csv: no such file"));
}

TEST(DeepBench, ShippedConstantsFollowTheirDerivation) {
  SKIP_WITHOUT_DEEPBENCH();
  const Derived d = derive();
  const AnalyticParams a = load_analytic_params(shipped_analytic_params_path());
  std::printf("launch_overhead: smallest DeepBench time %.0f us\n", d.launch_overhead * 1e6);
  EXPECT_DOUBLE_EQ(a.launch_overhead.value, d.launch_overhead);
  for (const auto& [key, value] : d.compute) {
    const auto [c, p] = key;
    std::printf("compute_efficiency %-6s %-31s %.3f  (median of %d compute-bound rows)\n",
                to_string(p).c_str(), to_string(c).c_str(), value.first, value.second);
    EXPECT_NEAR(a.compute(c, p), value.first, 0.0005) << to_string(p) << " " << to_string(c);
  }
  EXPECT_EQ(d.compute.size(), 14u);  // 7 classes with DeepBench rows x {fp32, tensor}
  std::printf("memory_efficiency gemm %.3f  (median of %d memory-bound FP32 GEMM rows)\n",
              d.gemm_memory.first, d.gemm_memory.second);
  EXPECT_NEAR(a.memory(KernelClass::gemm), d.gemm_memory.first, 0.0005);
}

// In-sample: the constants come from these rows, so the signed medians sit near 0 by
// construction; the spread is what one efficiency per class cannot capture across shapes.
// Bounds: the errors the shipped constants give (docs/compute-model.md) plus 0.05, rounded up
// to a multiple of 0.05.
TEST(DeepBench, AnalyticV100TimesMatchMeasuredConvolutions) {
  SKIP_WITHOUT_DEEPBENCH();
  const AnalyticParams a = load_analytic_params(shipped_analytic_params_path());
  const ErrorStats fp32 = errors(conv_kernels(data().fp32, Precision::fp32), Precision::fp32, a);
  const ErrorStats mixed = errors(conv_kernels(data().mixed, Precision::tensor), Precision::tensor, a);
  const ErrorStats gemm32 = errors(gemm_kernels(data().fp32, Precision::fp32), Precision::fp32, a);
  const ErrorStats gemm16 = errors(gemm_kernels(data().mixed, Precision::tensor), Precision::tensor, a);
  print("conv fp32", fp32);
  print("conv tensor (fp16 mixed)", mixed);
  print("gemm fp32", gemm32);
  print("gemm tensor (fp16 mixed)", gemm16);
  EXPECT_EQ(fp32.n, 272);
  EXPECT_LE(fp32.median_abs, 0.30);
  EXPECT_LE(fp32.p90_abs, 0.65);
  EXPECT_LE(std::abs(fp32.median_signed), 0.05);
  EXPECT_LE(mixed.median_abs, 0.35);
  EXPECT_LE(mixed.p90_abs, 0.75);
  EXPECT_LE(std::abs(mixed.median_signed), 0.05);
  EXPECT_LE(gemm32.median_abs, 0.15);
  EXPECT_LE(gemm32.p90_abs, 0.35);
  EXPECT_LE(gemm16.median_abs, 0.15);
  EXPECT_LE(gemm16.p90_abs, 0.40);
}

}  // namespace
}  // namespace gpuscale::compute
