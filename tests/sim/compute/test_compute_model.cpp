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
#include <tuple>
#include <vector>

#include "calibration/src/analytic_fit.hpp"
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
  a.gemm_efficiency.fill(0.5);
  a.gemm_memory_efficiency = 0.8;
  a.elementwise_memory_efficiency = 0.8;
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

// A fused attention core runs at the GPU's measured efficiency for it, forward and backward,
// where the spec has one (the H100's cuDNN figures), else at the GEMM efficiency.
TEST(AnalyticModel, FusedAttentionRunsAtTheGpusMeasuredEfficiency) {
  const KernelWork forward{KernelClass::fused_attention_forward, 1e10, 1e3};
  const KernelWork backward{KernelClass::fused_attention_backward, 1e10, 1e3};
  EXPECT_DOUBLE_EQ(analytic_kernel_time(toy_gpu(), toy_params(), forward, Precision::fp16).value,
                   1e10 / (20e12 * 0.5) + 5e-6);
  GpuSpec measured = toy_gpu();
  measured.fused_attention = GpuSpec::FusedAttention{0.7, 0.4};
  EXPECT_DOUBLE_EQ(analytic_kernel_time(measured, toy_params(), forward, Precision::fp16).value,
                   1e10 / (20e12 * 0.7) + 5e-6);
  EXPECT_DOUBLE_EQ(analytic_kernel_time(measured, toy_params(), backward, Precision::fp16).value,
                   1e10 / (20e12 * 0.4) + 5e-6);
  const GpuSpec h100 = load_gpu_spec("H100-SXM");
  ASSERT_TRUE(h100.fused_attention.has_value());
  EXPECT_DOUBLE_EQ(h100.fused_attention->forward, 0.670);
  EXPECT_DOUBLE_EQ(h100.fused_attention->backward, 0.536);
  EXPECT_FALSE(load_gpu_spec("H200-SXM").fused_attention.has_value());
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

// A recurrent GEMM streams W_hh with one SM per slab of 128 of its 4h rows: with 10 SMs, an
// LSTM of 128 units (4 slabs) reads at 4/10 of the recurrent bandwidth, one of 512 units (16
// slabs) at all of it; the FLOPs run at the GEMM efficiency.
TEST(AnalyticModel, RecurrentGemmStreamsItsWeightsOnTheSmsItsSlabsOccupy) {
  GpuSpec gpu = toy_gpu();
  gpu.sm_count = 10;
  AnalyticParams a = toy_params();
  a.recurrent_slab_rows = 128;
  a.recurrent_memory_efficiency.fill(0.9);
  a.recurrent_memory_efficiency[static_cast<int>(Precision::fp16)] = 0.6;
  const double copy = 1000e9 * 0.5;
  for (const auto& [p, e, efficiency] :
       {std::tuple{Precision::fp32, 4.0, 0.9}, std::tuple{Precision::fp16, 2.0, 0.6}}) {
    const KernelWork small = recurrent_gemm_work(16, 128, p);
    EXPECT_EQ(small.kind, KernelClass::recurrent_gemm);
    EXPECT_EQ(small.weight_rows, 512);
    EXPECT_DOUBLE_EQ(small.flops, 2 * 16 * 512 * 128.0);
    EXPECT_DOUBLE_EQ(small.bytes, e * (16 * 128 + 128 * 512 + 16 * 512.0));
    EXPECT_DOUBLE_EQ(recurrent_bandwidth(gpu, a, 512, p).value, copy * efficiency * 0.4);
    EXPECT_DOUBLE_EQ(analytic_kernel_time(gpu, a, small, p).value,
                     small.bytes / (copy * efficiency * 0.4) + 5e-6);
    const KernelWork wide = recurrent_gemm_work(16, 512, p);
    EXPECT_DOUBLE_EQ(analytic_kernel_time(gpu, a, wide, p).value,
                     wide.bytes / (copy * efficiency) + 5e-6);
    // At a batch of 4096 the FLOPs bind: the GEMM's roofline.
    const KernelWork big = recurrent_gemm_work(4096, 512, p);
    EXPECT_DOUBLE_EQ(analytic_kernel_time(gpu, a, big, p).value,
                     big.flops / (gpu.peak(p).value * 0.5) + 5e-6);
  }
  // A slab's rows round up: 513 rows are 5 slabs of 128.
  EXPECT_DOUBLE_EQ(recurrent_bandwidth(gpu, a, 513, Precision::fp32).value, copy * 0.9 * 0.5);
  EXPECT_THROW(a.memory(KernelClass::recurrent_gemm), std::logic_error);
}

TEST(AnalyticModel, TensorPrecisionOnAGpuWithoutTensorCoresIsAConfigError) {
  EXPECT_THAT(config_error_of([] {
                analytic_kernel_time(toy_gpu(), toy_params(), {KernelClass::gemm, 1, 1},
                                     Precision::tensor);
              }),
              HasSubstr("has no FP16 Tensor Cores"));
}

TEST(ConvWork, FlopsBytesAndClassFollowTheShapeAndPass) {
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
  EXPECT_EQ(w.kind, KernelClass::conv_forward);
  EXPECT_DOUBLE_EQ(conv_kernel_work(s, TrainingPass::backward_data, Precision::tensor).bytes,
                   w.bytes / 2);
  EXPECT_EQ(conv_kernel_work(s, TrainingPass::backward_weights, Precision::fp32).kind,
            KernelClass::conv_backward_weights);
  EXPECT_THROW(analytic_kernel_time(toy_gpu(), toy_params(), w, Precision::fp32),
               std::logic_error);  // a convolution is timed by its algorithm
  s.filter_height = 9;  // taller than the padded input
  EXPECT_THROW(conv_kernel_work(s, TrainingPass::forward, Precision::fp32), std::invalid_argument);
}

// --- Convolution algorithms (conv_model.hpp) ----------------------------------------------------

// A toy GPU of 4 SMs and round-number constants: every closed form below is hand-checkable.
ConvModelParams toy_conv_params() {
  ConvModelParams c;
  c.tiles = {{2, 2}};
  ConvPrecisionParams p;
  p.gemm_efficiency = {0.5, 0.5, 0.25};
  p.gemm_fixed_cost = {1e-6};
  p.epilogue_steps = 2;
  p.memory_efficiency = 1;
  p.winograd_efficiency = 0.5;
  p.winograd_5x5_efficiency = 0.25;
  p.winograd_fixed_cost = {2e-6};
  c.precision.fill(p);
  return c;
}

GpuSpec toy_conv_gpu() {
  GpuSpec g = toy_gpu();
  g.sm_count = 4;
  return g;
}

TEST(ConvModel, ImplicitGemmPaysWholeWavesAndItsEpilogue) {
  ConvShape s;  // forward: M = N P Q = 1 x 3 x 1 = 3, N = K = 2, R = C R S = 2 x 1 x 1 = 2
  s.in_channels = 2;
  s.in_height = 3;
  s.out_channels = 2;
  const double launch = 5e-6;
  const auto t = conv_algorithm_time(toy_conv_gpu(), toy_conv_params(), {launch}, s,
                                     TrainingPass::forward, Precision::fp32,
                                     ConvAlgorithm::implicit_gemm);
  ASSERT_TRUE(t);
  // 2 tiles of 2x2 on 4 SMs: one wave, half full. The second tile holds one row of M = 3 but
  // computes two: F = 2 x 4 x 2 x 2 = 32; epilogue 1 + 2/2.
  const double compute = 32.0 * 2 / (10e12 * 0.5 * 0.5);
  const double memory = 4.0 * (2 * 3 + 2 * 2 + 2 * 3) / (1000e9 * 0.5);
  EXPECT_DOUBLE_EQ(t->value, launch + 1e-6 + std::max(compute, memory));
  EXPECT_EQ(conv_workspace_bytes(s, TrainingPass::forward, Precision::fp32,
                                 ConvAlgorithm::implicit_gemm),
            0);
}

TEST(ConvModel, AKernelTakesWholeChannelSlicesAtEveryFilterTap) {
  ConvShape s;  // one channel, 3x3 image, 3x3 filter with pad 1, 2 filters: M = 9, N = 2
  s.in_height = s.in_width = 3;
  s.filter_height = s.filter_width = 3;
  s.pad_height = s.pad_width = 1;
  s.out_channels = 2;
  const double launch = 5e-6;
  auto forward = [&](long slice) {
    ConvModelParams p = toy_conv_params();
    p.precision[static_cast<int>(Precision::fp32)].channel_slice = slice;
    return conv_algorithm_time(toy_conv_gpu(), p, {launch}, s, TrainingPass::forward,
                               Precision::fp32, ConvAlgorithm::implicit_gemm)
        ->value;
  };
  // The input, filters and output once: 4 B x (9 + 2 x 9 + 2 x 9).
  const double memory = 4.0 * (9 + 18 + 18) / (1000e9 * 0.5);
  // Without slices the reduction is C R S = 9 and the pass is memory-bound.
  EXPECT_DOUBLE_EQ(forward(1), launch + 1e-6 + memory);
  // Slices of 4 channels: R = 4 x 9 = 36. 5 tiles of 2x2 on 4 SMs: 2 waves of blocks of
  // 2 x 2 x 2 x 36 FLOPs at 1/4 of 10 TFLOP/s x 0.5 each; epilogue 1 + 2/36.
  const double compute = 2 * (2.0 * 2 * 2 * 36) / (10e12 * 0.5 / 4) * (1 + 2.0 / 36);
  ASSERT_GT(compute, memory);
  EXPECT_DOUBLE_EQ(forward(4), launch + 1e-6 + compute);
}

// cuDNN's dgrad_1x1_stride_2x2 Tensor Core kernel computes the N P Q positions a tap reaches;
// FP32 kernels compute all N H W input positions.
TEST(ConvModel, TensorCoreStrideTwoOneByOneBackwardDataComputesOnlyThePositionsATapReaches) {
  ConvShape s;  // 128 images of 256 channels, 4x4, 256 filters of 1x1 at stride 2: output 2x2
  s.batch = 128;
  s.in_channels = s.out_channels = 256;
  s.in_height = s.in_width = 4;
  s.stride_height = s.stride_width = 2;
  GpuSpec gpu = toy_conv_gpu();
  gpu.peak_tensor = FlopsPerSecond{40e12};
  const double launch = 5e-6;
  auto backward_data = [&](Precision p) {
    return conv_algorithm_time(gpu, toy_conv_params(), {launch}, s, TrainingPass::backward_data,
                               p, ConvAlgorithm::implicit_gemm)
        ->value;
  };
  // Blocks of 2 x 2 outputs reducing over R = K = 256; epilogue 1 + 2/256.
  const double block_flops = 2.0 * 2 * 2 * 256, epilogue = 1 + 2.0 / 256;
  // Tensor Cores: M = N P Q = 512, N = C = 256: 256 x 128 tiles, 8192 waves on 4 SMs.
  const double tensor = 8192 * block_flops / (40e12 * 0.5 / 4) * epilogue;
  // FP32: M = N H W = 2048: four times the tiles.
  const double fp32 = 32768 * block_flops / (10e12 * 0.5 / 4) * epilogue;
  const double elements = 128 * 256 * 16 + 256 * 256 + 128 * 256 * 4;  // dx, filters, dy
  ASSERT_GT(tensor, 2 * elements / (1000e9 * 0.5));  // compute-bound in both precisions
  ASSERT_GT(fp32, 4 * elements / (1000e9 * 0.5));
  EXPECT_DOUBLE_EQ(backward_data(Precision::tensor), launch + 1e-6 + tensor);
  EXPECT_DOUBLE_EQ(backward_data(Precision::fp32), launch + 1e-6 + fp32);
}

TEST(ConvModel, WinogradRunsOnlyStrideOneThreeOrFiveFiltersAndFitsTheWorkspaceLimit) {
  ConvShape s;  // 256 channels, 14x14, 3x3 pad 1, batch 16: a ResNet shape non-fused Winograd wins
  s.batch = 16;
  s.in_channels = s.out_channels = 256;
  s.in_height = s.in_width = 14;
  s.filter_height = s.filter_width = 3;
  s.pad_height = s.pad_width = 1;
  const GpuSpec v100 = load_gpu_spec("V100-SXM2");
  const AnalyticParams a = load_analytic_params(shipped_analytic_params_path());
  auto choose = [&](const ConvShape& shape, ConvAlgorithmPolicy policy) {
    return choose_conv_algorithm(v100, a.conv, a.launch_overhead, shape, TrainingPass::forward,
                                 Precision::fp32, policy);
  };
  const ConvChoice tuned = choose(s, {});
  EXPECT_EQ(tuned.algorithm, ConvAlgorithm::winograd);
  // F(4x4, 3x3): alpha = 6; 4 x 4 tiles per image; input, filters and output transformed.
  const double tiles = 16.0 * 4 * 4;
  EXPECT_DOUBLE_EQ(tuned.workspace_bytes, 4.0 * 36 * (tiles * 256 + 256 * 256 + tiles * 256));
  EXPECT_EQ(choose(s, {.autotune = false}).algorithm, ConvAlgorithm::implicit_gemm);
  // Below its workspace, the next fastest: fused Winograd, whose workspace is far smaller.
  EXPECT_EQ(choose(s, {.autotune = true, .workspace_limit_bytes = tuned.workspace_bytes - 1})
                .algorithm,
            ConvAlgorithm::winograd_fused);
  EXPECT_LT(tuned.time.value, choose(s, {.autotune = false}).time.value);
  for (auto change : {+[](ConvShape& c) { c.stride_height = c.stride_width = 2; },
                      +[](ConvShape& c) { c.filter_height = c.filter_width = 7; },
                      +[](ConvShape& c) { c.groups = 2; }}) {
    ConvShape other = s;
    change(other);
    EXPECT_FALSE(conv_algorithm_time(v100, a.conv, a.launch_overhead, other,
                                     TrainingPass::forward, Precision::fp32,
                                     ConvAlgorithm::winograd));
  }
  // Tensor Cores: DeepBench's FP16 runs were implicit GEMM only, so are the tensor constants.
  EXPECT_FALSE(conv_algorithm_time(v100, a.conv, a.launch_overhead, s, TrainingPass::forward,
                                   Precision::tensor, ConvAlgorithm::winograd));
}

// cuDNN's 5x5 non-fused kernels work on 9x9 tiles (winogradForwardData9x9_5x5): F(5x5, 5x5), at
// an efficiency of its own. AlexNet's conv2 (96 -> 256 on 26x26, 5x5 pad 2) then fits MXNet's
// 1 GiB workspace up to batch 256 and not at 512, as MXNet's one-V100 throughput says.
TEST(ConvModel, FiveByFiveWinogradIsFiveByFiveOutputTilesOfNineByNinePoints) {
  ConvShape s;
  s.in_channels = 96;
  s.out_channels = 256;
  s.in_height = s.in_width = 26;
  s.filter_height = s.filter_width = 5;
  s.pad_height = s.pad_width = 2;
  const double one_gib = 1024.0 * 1024 * 1024;  // MXNet's default workspace limit
  for (long batch : {128L, 256L, 512L}) {
    s.batch = batch;
    const double tiles = batch * 6.0 * 6.0;  // ceil(26 / 5) = 6 tiles a side
    const double workspace =
        conv_workspace_bytes(s, TrainingPass::forward, Precision::fp32, ConvAlgorithm::winograd);
    EXPECT_DOUBLE_EQ(workspace, 4.0 * 81 * (tiles * 96 + 96 * 256 + tiles * 256));
    EXPECT_EQ(workspace <= one_gib, batch <= 256) << batch;
  }
  // On the toy GPU (4 SMs, 2x2 tiles): one image of 9x9, 1 -> 1 channel, a 5x5 output, so one
  // 9x9 tile, 81 GEMMs of 1 x 1 over 1 channel, each a whole 2x2 tile, in ceil(81 / 4) = 21
  // waves, at winograd_5x5_efficiency (0.25, where F(4x4, 3x3) runs at 0.5).
  const GpuSpec gpu = toy_conv_gpu();
  ConvShape one;
  one.in_height = one.in_width = 9;
  one.filter_height = one.filter_width = 5;
  const auto t = conv_algorithm_time(gpu, toy_conv_params(), Seconds{0}, one,
                                     TrainingPass::forward, Precision::fp32,
                                     ConvAlgorithm::winograd);
  ASSERT_TRUE(t);
  const double gemm = 21 * (2.0 * 2 * 2 * 1) / (gpu.peak_fp32.value * 0.25 / 4);
  const double bytes = 4.0 * ((81 + 25) + 2 * 81 * (1 + 1 + 1));
  const double expected = 2e-6 + gemm + bytes / gpu.copy_bandwidth().value;
  EXPECT_NEAR(t->value, expected, 1e-9 * expected);
}

// cuDNN's fused WINOGRAD: F(2x2, 3x3) in one kernel, 3x3 stride 1, no backward-filter variant.
TEST(ConvModel, FusedWinogradIsAGemmOverSixteenPointsForThreeByThreeForwardAndBackwardData) {
  ConvShape s;  // 2 images of 4x4, 3x3 pad 1, 2 -> 2 channels: T = 2 x 2 x 2 = 8 tiles of 2x2
  s.batch = 2;
  s.in_channels = s.out_channels = 2;
  s.in_height = s.in_width = 4;
  s.filter_height = s.filter_width = 3;
  s.pad_height = s.pad_width = 1;
  ConvModelParams params = toy_conv_params();
  params.precision[static_cast<int>(Precision::fp32)].winograd_fused_efficiency = 0.25;
  const double launch = 5e-6;
  auto fused = [&](const ConvShape& shape, TrainingPass pass) {
    return conv_algorithm_time(toy_conv_gpu(), params, {launch}, shape, pass, Precision::fp32,
                               ConvAlgorithm::winograd_fused);
  };
  // 8 x 2 outputs reducing over 16 x 2: 4 x 1 tiles of 2x2 on 4 SMs, one full wave;
  // F = 2 x 8 x 2 x 32 = 1024 at 10 TFLOP/s x 0.25; input, output and filters moved once.
  const double compute = 1024.0 / (10e12 * 0.25);
  const double memory = 4.0 * (2 * 2 * 16 * 2 + 2 * 2 * 9) / (1000e9 * 0.5);
  ASSERT_TRUE(fused(s, TrainingPass::forward));
  EXPECT_DOUBLE_EQ(fused(s, TrainingPass::forward)->value,
                   launch + 1e-6 + std::max(compute, memory));
  EXPECT_TRUE(fused(s, TrainingPass::backward_data));
  EXPECT_FALSE(fused(s, TrainingPass::backward_weights));
  EXPECT_DOUBLE_EQ(conv_workspace_bytes(s, TrainingPass::forward, Precision::fp32,
                                        ConvAlgorithm::winograd_fused),
                   4.0 * 16 * 2 * 2);  // the transformed filters
  ConvShape five = s;
  five.filter_height = five.filter_width = 5;
  five.pad_height = five.pad_width = 2;
  EXPECT_FALSE(fused(five, TrainingPass::forward));
  ConvShape strided = s;
  strided.stride_height = strided.stride_width = 2;
  EXPECT_FALSE(fused(strided, TrainingPass::forward));
  EXPECT_FALSE(conv_algorithm_time(toy_conv_gpu(), toy_conv_params(), {launch}, s,
                                   TrainingPass::forward, Precision::fp32,
                                   ConvAlgorithm::winograd_fused));  // the precision has none
}

TEST(ConvModel, MoreImagesNeverTakeLess) {
  const GpuSpec v100 = load_gpu_spec("V100-SXM2");
  const AnalyticParams a = load_analytic_params(shipped_analytic_params_path());
  ConvShape s;
  s.in_channels = 256;
  s.out_channels = 512;
  s.in_height = s.in_width = 14;
  s.filter_height = s.filter_width = 1;
  for (int p = 0; p < kTrainingPassCount; ++p) {
    double previous = 0;
    for (long n : {1, 2, 3, 8, 16, 31, 64, 128}) {
      s.batch = n;
      const double t = choose_conv_algorithm(v100, a.conv, a.launch_overhead, s,
                                             static_cast<TrainingPass>(p), Precision::fp32, {})
                           .time.value;
      EXPECT_GE(t, previous) << to_string(static_cast<TrainingPass>(p)) << " batch " << n;
      previous = t;
    }
  }
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
  for (const char* model :
       {"V100-SXM2", "V100-PCIe", "P100-SXM2", "A100-SXM4-40GB", "A100-SXM4-80GB", "H200-SXM",
        "Quadro-GV100"}) {
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

// Tensor Core precisions by generation (datasheets, dense rates): FP16 from Volta, TF32 and BF16
// from Ampere (half and equal to FP16's), FP8 from Hopper (twice FP16's); a GPU without one
// says so, naming what it has.
TEST(GpuSpec, TensorCorePrecisionsComeWithTheirGeneration) {
  const GpuSpec v100 = load_gpu_spec("V100-SXM2");
  const GpuSpec a100 = load_gpu_spec("A100-SXM4-80GB");
  const GpuSpec h100 = load_gpu_spec("H100-SXM");
  EXPECT_FALSE(v100.has(Precision::bf16));
  EXPECT_FALSE(a100.has(Precision::fp8));
  EXPECT_DOUBLE_EQ(a100.peak(Precision::tf32).value, a100.peak(Precision::tensor).value / 2);
  EXPECT_DOUBLE_EQ(a100.peak(Precision::bf16).value, a100.peak(Precision::tensor).value);
  EXPECT_DOUBLE_EQ(h100.peak(Precision::tf32).value, 494.7e12);
  EXPECT_DOUBLE_EQ(h100.peak(Precision::bf16).value, 989.4e12);
  EXPECT_DOUBLE_EQ(h100.peak(Precision::fp8).value, 1978.9e12);
  const std::string error = testing::config_error_of([&] { v100.peak(Precision::bf16); });
  EXPECT_THAT(error, ::testing::HasSubstr("GPU V100-SXM2 has no bf16 Tensor Cores"));
  EXPECT_THAT(error, ::testing::HasSubstr("its precisions are fp32, fp16, tensor"));
  EXPECT_DOUBLE_EQ(bytes_per_element(Precision::tf32), 4);
  EXPECT_DOUBLE_EQ(bytes_per_element(Precision::bf16), 2);
  EXPECT_DOUBLE_EQ(bytes_per_element(Precision::fp8), 1);
}

// DeepBench's V100 runs cannot give the later Tensor Core precisions their constants: they take
// the FP16 Tensor Core ones, as the file says.
TEST(AnalyticParams, LaterTensorCorePrecisionsTakeTheFp16TensorCoreConstants) {
  const AnalyticParams a = load_analytic_params(shipped_analytic_params_path());
  for (Precision p : {Precision::tf32, Precision::bf16, Precision::fp8}) {
    EXPECT_EQ(a.gemm_efficiency[static_cast<int>(p)],
              a.gemm_efficiency[static_cast<int>(Precision::tensor)]);
    EXPECT_EQ(a.conv.of(p).gemm_efficiency, a.conv.of(Precision::tensor).gemm_efficiency);
    EXPECT_EQ(a.conv.of(p).channel_slice, a.conv.of(Precision::tensor).channel_slice);
    EXPECT_EQ(a.recurrent_memory_efficiency[static_cast<int>(p)],
              a.recurrent_memory_efficiency[static_cast<int>(Precision::tensor)]);
  }
}

TEST(GpuSpec, AFileByPathLoads) {
  const GpuSpec g = load_gpu_spec(write_temp_file("good-gpu.yaml", kGoodSpec));
  EXPECT_EQ(g.name, "Test-GPU");
  EXPECT_DOUBLE_EQ(g.boost_clock.value, 1530e6);
}

TEST(GpuSpec, UnknownModelListsTheShippedOnes) {
  const std::string msg = config_error_of([] { load_gpu_spec("V100-SXM3"); });
  EXPECT_THAT(msg, HasSubstr("unknown GPU model 'V100-SXM3'"));  // as the user wrote it
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
  EXPECT_EQ(a.framework_overhead.value, 0);  // the framework's host model carries it
  EXPECT_TRUE(a.conv.of(Precision::fp32).winograd_efficiency.has_value());
  EXPECT_FALSE(a.conv.of(Precision::tensor).winograd_efficiency.has_value());
  EXPECT_TRUE(a.conv.of(Precision::fp32).winograd_fused_efficiency.has_value());
  EXPECT_FALSE(a.conv.of(Precision::tensor).winograd_fused_efficiency.has_value());
  EXPECT_EQ(a.conv.of(Precision::tensor).channel_multiple, 8);
}

TEST(AnalyticParams, EveryConstantIsRequiredAndUnknownKeysAreRejected) {
  const std::string conv =
      "{gemm_efficiency: {forward: 0.9, backward_data: 0.9, backward_weights: 0.6}, "
      "gemm_fixed_cost: 10 us, epilogue_steps: 10, memory_efficiency: 0.9}";
  const std::string good =
      "name: t\nlaunch_overhead: 8 us\nframework_overhead: 20 us\n"
      "gemm: {efficiency: {fp32: 0.8, fp16: 0.8, tensor: 0.8}, memory_efficiency: 0.7}\n"
      "elementwise: {memory_efficiency: 1}\n"
      "recurrent: {slab_rows: 128, memory_efficiency: {fp32: 0.9, fp16: 0.9, tensor: 0.8}}\n"
      "convolution:\n  tiles: [{m: 128, n: 64}]\n  fp32: " + conv + "\n  fp16: " + conv +
      "\n  tensor: " + conv + "\n";
  EXPECT_NO_THROW(load_analytic_params(write_temp_file("params.yaml", good)));

  std::string typo = good;
  typo.replace(typo.find("gemm: {"), 5, "gem: ");
  EXPECT_THAT(config_error_of([&] { load_analytic_params(write_temp_file("typo.yaml", typo)); }),
              MatchesRegex(".*typo.yaml:4: unknown key 'gem' in analytic model parameters "
                           "\\(did you mean 'gemm'\\?\\).*"));

  std::string above_peak = good;
  above_peak.replace(above_peak.find("forward: 0.9"), 12, "forward: 1.5");
  EXPECT_THAT(config_error_of([&] {
                load_analytic_params(write_temp_file("above.yaml", above_peak));
              }),
              HasSubstr("above.yaml:9"));

  std::string no_recurrent = good;
  no_recurrent.erase(no_recurrent.find("recurrent: {"),
                     no_recurrent.find("convolution:") - no_recurrent.find("recurrent: {"));
  EXPECT_THAT(
      config_error_of([&] { load_analytic_params(write_temp_file("missing.yaml", no_recurrent)); }),
      MatchesRegex(".*missing.yaml.*'recurrent'.*"));
  std::string fast = good;
  fast.replace(fast.find("fp32: 0.9, fp16: 0.9, tensor"), 9, "fp32: 2.5");
  EXPECT_THAT(config_error_of([&] { load_analytic_params(write_temp_file("fast.yaml", fast)); }),
              HasSubstr("fast.yaml:6"));

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

struct Data {
  calib::DeepBenchResults fp32, mixed;
  std::vector<calib::ConvCall> fp32_calls, mixed_calls;
  GpuSpec v100;
};

const Data& data() {
  static const Data d = [] {
    Data x{calib::read_deepbench_csv(kDeepBenchDir + "/results_fp32.csv"),
           calib::read_deepbench_csv(kDeepBenchDir + "/results_fp16_mixed.csv"),
           {},
           {},
           load_gpu_spec("V100-SXM2")};
    x.fp32_calls = calib::conv_calls(x.fp32);
    x.mixed_calls = calib::conv_calls(x.mixed);
    return x;
  }();
  return d;
}

// Relative tolerance of a refit against the shipped value (printed with three digits).
void expect_close(double shipped, double fitted, const std::string& what) {
  EXPECT_NEAR(shipped, fitted, 0.005 * std::max(1.0, std::abs(fitted))) << what;
}

void expect_conv_constants(const ConvPrecisionParams& shipped, const ConvPrecisionParams& fitted,
                           const std::string& precision) {
  for (int p = 0; p < kTrainingPassCount; ++p) {
    const std::string pass = to_string(static_cast<TrainingPass>(p));
    std::printf("convolution %-6s gemm_efficiency %-16s %.3f\n", precision.c_str(), pass.c_str(),
                fitted.gemm_efficiency[p]);
    expect_close(shipped.gemm_efficiency[p], fitted.gemm_efficiency[p], precision + " " + pass);
  }
  std::printf("convolution %-6s gemm_fixed_cost %.1f us, epilogue_steps %.2f, memory_efficiency "
              "%.3f\n",
              precision.c_str(), fitted.gemm_fixed_cost.value * 1e6, fitted.epilogue_steps,
              fitted.memory_efficiency);
  EXPECT_NEAR(shipped.gemm_fixed_cost.value, fitted.gemm_fixed_cost.value, 0.1e-6);
  expect_close(shipped.epilogue_steps, fitted.epilogue_steps, precision + " epilogue_steps");
  expect_close(shipped.memory_efficiency, fitted.memory_efficiency, precision + " memory");
  ASSERT_EQ(shipped.winograd_efficiency.has_value(), fitted.winograd_efficiency.has_value());
  if (fitted.winograd_efficiency) {
    std::printf("convolution %-6s winograd_efficiency %.3f, winograd_fixed_cost %.1f us\n",
                precision.c_str(), *fitted.winograd_efficiency,
                fitted.winograd_fixed_cost.value * 1e6);
    expect_close(*shipped.winograd_efficiency, *fitted.winograd_efficiency,
                 precision + " winograd");
    EXPECT_NEAR(shipped.winograd_fixed_cost.value, fitted.winograd_fixed_cost.value, 0.1e-6);
    ASSERT_TRUE(shipped.winograd_fused_efficiency && fitted.winograd_fused_efficiency);
    std::printf("convolution %-6s winograd_fused_efficiency %.3f\n", precision.c_str(),
                *fitted.winograd_fused_efficiency);
    expect_close(*shipped.winograd_fused_efficiency, *fitted.winograd_fused_efficiency,
                 precision + " winograd_fused");
    ASSERT_TRUE(shipped.winograd_5x5_efficiency && fitted.winograd_5x5_efficiency);
    std::printf("convolution %-6s winograd_5x5_efficiency %.3f\n", precision.c_str(),
                *fitted.winograd_5x5_efficiency);
    expect_close(*shipped.winograd_5x5_efficiency, *fitted.winograd_5x5_efficiency,
                 precision + " winograd_5x5");
  }
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

// The derivation of analytic-v100.yaml (calibration/src/analytic_fit.hpp), recomputed.
TEST(DeepBench, ShippedConstantsFollowTheirDerivation) {
  SKIP_WITHOUT_DEEPBENCH();
  const Data& d = data();
  const AnalyticParams a = load_analytic_params(shipped_analytic_params_path());
  const AnalyticParams fitted = calib::fit_analytic_params(d.fp32, d.mixed, d.v100, a);
  std::printf("launch_overhead: smallest DeepBench time %.0f us\n",
              fitted.launch_overhead.value * 1e6);
  EXPECT_DOUBLE_EQ(a.launch_overhead.value, fitted.launch_overhead.value);
  for (Precision p : {Precision::fp32, Precision::tensor}) {
    const double g = fitted.gemm_efficiency[static_cast<int>(p)];
    std::printf("gemm efficiency %-6s %.3f\n", to_string(p).c_str(), g);
    EXPECT_NEAR(a.gemm_efficiency[static_cast<int>(p)], g, 0.0005) << to_string(p);
  }
  std::printf("gemm memory_efficiency %.3f\n", fitted.gemm_memory_efficiency);
  EXPECT_NEAR(a.gemm_memory_efficiency, fitted.gemm_memory_efficiency, 0.0005);
  for (Precision p : {Precision::fp32, Precision::tensor}) {
    expect_conv_constants(a.conv.of(p), fitted.conv.of(p), to_string(p));
  }
}

// The held-out half: rows no constant was fitted on. Bounds: the errors the shipped constants
// give (docs/compute-model.md#check-against-deepbench) plus 0.05, rounded up to 0.05.
TEST(DeepBench, HeldOutKernelTimesStayWithinTheirDocumentedError) {
  SKIP_WITHOUT_DEEPBENCH();
  const Data& d = data();
  const AnalyticParams a = load_analytic_params(shipped_analytic_params_path());
  auto conv = [&](const char* what, const std::vector<calib::ConvCall>& calls, Precision p,
                  bool held, std::optional<TrainingPass> pass = std::nullopt) {
    const calib::ErrorStats e = calib::conv_errors(calls, d.v100, a, p, held, pass);
    std::printf("%s\n", calib::format_error_stats(what, e).c_str());
    return e;
  };
  for (int p = 0; p < kTrainingPassCount; ++p) {
    const auto pass = static_cast<TrainingPass>(p);
    conv(("held-out conv fp32 " + to_string(pass)).c_str(), d.fp32_calls, Precision::fp32, true,
         pass);
    conv(("held-out conv tensor " + to_string(pass)).c_str(), d.mixed_calls, Precision::tensor,
         true, pass);
  }
  conv("fitting-half conv fp32", d.fp32_calls, Precision::fp32, false);
  conv("fitting-half conv tensor", d.mixed_calls, Precision::tensor, false);
  const calib::ErrorStats fp32 = conv("held-out conv fp32", d.fp32_calls, Precision::fp32, true);
  const calib::ErrorStats mixed =
      conv("held-out conv tensor", d.mixed_calls, Precision::tensor, true);
  const calib::ErrorStats gemm32 = calib::gemm_errors(d.fp32, d.v100, a, Precision::fp32, true);
  const calib::ErrorStats gemm16 = calib::gemm_errors(d.mixed, d.v100, a, Precision::tensor, true);
  std::printf("%s\n%s\n", calib::format_error_stats("held-out gemm fp32", gemm32).c_str(),
              calib::format_error_stats("held-out gemm tensor", gemm16).c_str());
  EXPECT_GT(fp32.n, 100);
  EXPECT_LE(fp32.median_abs, 0.20);
  EXPECT_LE(fp32.p90_abs, 0.50);
  EXPECT_LE(mixed.median_abs, 0.25);
  EXPECT_LE(mixed.p90_abs, 0.60);
  EXPECT_LE(gemm32.median_abs, 0.15);
  EXPECT_LE(gemm16.median_abs, 0.15);
}

}  // namespace
}  // namespace gpuscale::compute
