#include "sim/compute/conv_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpuscale::compute {
namespace {

constexpr std::array<const char*, kTrainingPassCount> kTrainingPassNames{"forward", "backward_data",
                                                                         "backward_weights"};

double ceil_div(double a, double b) { return std::ceil(a / b); }

double round_up(long value, long multiple) {
  return static_cast<double>((value + multiple - 1) / multiple * multiple);
}

// The implicit GEMM of one pass: M x N outputs reducing over R, in `groups` independent GEMMs.
struct GemmView {
  double m = 0, n = 0, r = 0;
};

// Backward-data computes the input gradient at every input position from the filter taps that
// can reach it: with a stride s, ceil(R / s) x ceil(S / s) of them, a count the kernel's loop
// runs for every position alike (it does not skip the positions no tap reaches: skipping them
// in FP32 too makes the fit of DeepBench's FP32 rows worse, median |error| 0.106 -> 0.110 on
// the fitting half). The exception is `skips_unreached`: cuDNN 7's Tensor Core kernel for 1x1
// filters at stride 2x2 (below) computes only the N P Q positions a tap reaches.
// A kernel's main loop walks the filter taps and, per tap, the channels in slices of
// `channel_slice`, so the reduced (forward, backward-weights) or gathered (backward-data)
// channels count as whole slices.
GemmView gemm_view(double n, double c, double h, double w, double k, double r, double s, double p,
                   double q, double taps, long channel_slice, TrainingPass pass,
                   bool skips_unreached) {
  const double sliced_c = round_up(static_cast<long>(c), channel_slice);
  const double sliced_k = round_up(static_cast<long>(k), channel_slice);
  switch (pass) {
    case TrainingPass::forward:
      return {n * p * q, k, sliced_c * r * s};
    case TrainingPass::backward_data:
      return {skips_unreached ? n * p * q : n * h * w, c, sliced_k * taps};
    case TrainingPass::backward_weights:
      return {k, sliced_c * r * s, n * p * q};
  }
  throw std::logic_error("unhandled training pass");
}

// The compute time of `groups` GEMMs of m x n outputs reducing over r at `flops_per_s` with
// one tile of tile_m x tile_n outputs per block. A tile computes all its outputs even where the
// GEMM ends inside it; with `split_to_one_wave` the reduction is split into as many parts as
// keep one wave of blocks on the SMs (backward-weights). Each SM runs one block at a time at
// 1/SMs of the rate, so the GEMM takes its waves times one block's time: the same as
// 2 g M' N' r / (flops_per_s u) over the whole tiles M', N', and the same to the last bit for
// every shape of one wave.
double gemm_seconds_with_tile(const GpuSpec& gpu, double tile_m, double tile_n, double groups,
                              double m, double n, double r, double flops_per_s,
                              bool split_to_one_wave) {
  const double tiles = groups * ceil_div(m, tile_m) * ceil_div(n, tile_n);
  const double split =
      split_to_one_wave ? std::max(1.0, std::floor(gpu.sm_count / tiles)) : 1.0;
  const double waves = ceil_div(tiles * split, gpu.sm_count);
  const double block_flops = 2 * tile_m * tile_n * r / split;
  return waves * block_flops / (flops_per_s / gpu.sm_count);
}

// The same, run by whichever tile finishes first, each in either orientation (a kernel computes
// C = A B or its transpose B^T A^T alike, so a 128 x 32 tile also serves as 32 x 128).
double tiled_gemm_seconds(const GpuSpec& gpu, const ConvModelParams& params, double groups,
                          double m, double n, double r, double flops_per_s,
                          bool split_to_one_wave) {
  double best = std::numeric_limits<double>::infinity();
  for (const GemmTile& t : params.tiles) {
    for (auto [tile_m, tile_n] : {std::pair{t.m, t.n}, std::pair{t.n, t.m}}) {
      best = std::min(best, gemm_seconds_with_tile(gpu, tile_m, tile_n, groups, m, n, r,
                                                   flops_per_s, split_to_one_wave));
    }
  }
  return best;
}

// cuDNN 7 runs a 1x1, stride-2x2 backward-data on Tensor Cores with a kernel of its own,
// dgrad_1x1_stride_2x2 (a name NVIDIA's profiler lists among Tensor Core kernels:
// NVIDIA/PyProf pyprof/prof/tc.py, commit 7239fb6). [?] It computes only the positions a tap
// reaches and writes zeros at the other three quarters: DeepBench's Tensor Core rows of these
// shapes take 0.7-2.7x their forward, where every position would take 4x.
bool strided_1x1_dgrad_kernel_runs(const ConvShape& s, TrainingPass pass, Precision precision) {
  return on_tensor_cores(precision) && pass == TrainingPass::backward_data &&
         s.filter_height == 1 && s.filter_width == 1 && s.stride_height == 2 &&
         s.stride_width == 2;
}

Seconds implicit_gemm_time(const GpuSpec& gpu, const ConvModelParams& params,
                           const ConvPrecisionParams& pp, Seconds launch, const ConvShape& s,
                           TrainingPass pass, Precision precision) {
  const double g = static_cast<double>(s.groups);
  const double c = round_up(s.in_channels / s.groups, pp.channel_multiple);
  const double k = round_up(s.out_channels / s.groups, pp.channel_multiple);
  const double n = s.batch, h = s.in_height, w = s.in_width;
  const double r = s.filter_height, sw = s.filter_width;
  const double p = s.out_height(), q = s.out_width();
  const double taps = ceil_div(r, s.stride_height) * ceil_div(sw, s.stride_width);
  const GemmView v = gemm_view(n, c, h, w, k, r, sw, p, q, taps, pp.channel_slice, pass,
                               strided_1x1_dgrad_kernel_runs(s, pass, precision));
  // Backward-weights has few outputs and a long reduction: cuDNN splits the reduction into as
  // many parts as keep one wave of blocks on the SMs, and the epilogue is paid once per split,
  // a negligible part of a long reduction.
  const bool split = pass == TrainingPass::backward_weights;
  const double epilogue = split ? 1 : 1 + pp.epilogue_steps / v.r;
  const double flops_per_s =
      gpu.peak(precision).value * pp.gemm_efficiency[static_cast<int>(pass)];
  const double compute_s =
      epilogue * tiled_gemm_seconds(gpu, params, g, v.m, v.n, v.r, flops_per_s, split);
  const double bytes =
      bytes_per_element(precision) * g * (n * c * h * w + k * c * r * sw + n * k * p * q);
  const double memory_s = bytes / (gpu.copy_bandwidth().value * pp.memory_efficiency);
  return {launch.value + pp.gemm_fixed_cost.value + std::max(compute_s, memory_s)};
}

bool winograd_runs(const ConvShape& s, const ConvPrecisionParams& pp) {
  return pp.winograd_efficiency && s.groups == 1 && s.stride_height == 1 && s.stride_width == 1 &&
         s.filter_height == s.filter_width && (s.filter_height == 3 || s.filter_height == 5);
}

// F(m x m, r x r) with alpha = m + r - 1 transformed points per tile side.
struct WinogradWork {
  double alpha2 = 0;       // alpha^2 transformed points per tile
  double tiles = 0;        // N x ceil(P/m) x ceil(Q/m)
  double in = 0, out = 0;  // channels of the pass's input and output (swapped for backward-data)
};

WinogradWork winograd_work(const ConvShape& s, TrainingPass pass, double m) {
  const double alpha = m + static_cast<double>(s.filter_height) - 1;
  WinogradWork v;
  v.alpha2 = alpha * alpha;
  v.tiles = s.batch * ceil_div(s.out_height(), m) * ceil_div(s.out_width(), m);
  v.in = pass == TrainingPass::backward_data ? s.out_channels : s.in_channels;
  v.out = pass == TrainingPass::backward_data ? s.in_channels : s.out_channels;
  return v;
}

// Non-fused: F(4x4, 3x3) (alpha = 6) or F(5x5, 5x5) (alpha = 9: cuDNN's 5x5 kernels are
// winogradForwardData9x9_5x5, winogradForwardFilter9x9_5x5 and winogradForwardOutput9x9_5x5).
WinogradWork nonfused_winograd_work(const ConvShape& s, TrainingPass pass) {
  return winograd_work(s, pass, s.filter_height == 3 ? 4 : 5);
}

double nonfused_winograd_efficiency(const ConvShape& s, const ConvPrecisionParams& pp) {
  return s.filter_height == 3 ? *pp.winograd_efficiency : *pp.winograd_5x5_efficiency;
}

// The transformed input, filters and output, each written by one kernel and read by the next.
double winograd_transformed_elements(const WinogradWork& v) {
  return v.alpha2 * (v.tiles * v.in + v.in * v.out + v.tiles * v.out);
}

// The input and output, each moved once.
double plain_elements(const ConvShape& s) {
  return static_cast<double>(s.batch) *
         (s.in_channels * s.in_height * s.in_width + s.out_channels * s.out_height() * s.out_width());
}

Seconds winograd_time(const GpuSpec& gpu, const ConvModelParams& params,
                      const ConvPrecisionParams& pp, Seconds launch, const ConvShape& s,
                      TrainingPass pass, Precision precision) {
  const WinogradWork v = nonfused_winograd_work(s, pass);
  const double compute_s =
      tiled_gemm_seconds(gpu, params, v.alpha2, v.tiles, v.out, v.in,
                         gpu.peak(precision).value * nonfused_winograd_efficiency(s, pp), false);
  const double bytes =
      bytes_per_element(precision) * (plain_elements(s) + 2 * winograd_transformed_elements(v));
  const double memory_s = bytes / (gpu.copy_bandwidth().value * pp.memory_efficiency);
  return {launch.value + pp.winograd_fixed_cost.value + compute_s + memory_s};
}

// cuDNN 7's fused WINOGRAD: F(2x2, 3x3), stride 1, forward and backward-data only (its
// backward-filter WINOGRAD is not implemented). One kernel transforms each input tile, takes
// the alpha^2 = 16 products over all input channels and transforms the result back in
// registers, so only the input, the filters and the output cross memory: an implicit GEMM of
// T x Co outputs reducing over 16 Ci.
bool winograd_fused_runs(const ConvShape& s, TrainingPass pass, const ConvPrecisionParams& pp) {
  return pp.winograd_fused_efficiency && pass != TrainingPass::backward_weights &&
         s.groups == 1 && s.stride_height == 1 && s.stride_width == 1 &&
         s.filter_height == 3 && s.filter_width == 3;
}

WinogradWork fused_winograd_work(const ConvShape& s, TrainingPass pass) {
  return winograd_work(s, pass, 2);
}

Seconds winograd_fused_time(const GpuSpec& gpu, const ConvModelParams& params,
                            const ConvPrecisionParams& pp, Seconds launch, const ConvShape& s,
                            TrainingPass pass, Precision precision) {
  const WinogradWork v = fused_winograd_work(s, pass);
  const double compute_s =
      tiled_gemm_seconds(gpu, params, 1, v.tiles, v.out, v.alpha2 * v.in,
                         gpu.peak(precision).value * *pp.winograd_fused_efficiency, false);
  const double filters = static_cast<double>(s.in_channels * s.out_channels * 9);
  const double bytes = bytes_per_element(precision) * (plain_elements(s) + filters);
  const double memory_s = bytes / (gpu.copy_bandwidth().value * pp.memory_efficiency);
  return {launch.value + pp.gemm_fixed_cost.value + std::max(compute_s, memory_s)};
}

}  // namespace

std::string to_string(TrainingPass p) { return kTrainingPassNames[static_cast<int>(p)]; }

std::vector<std::string> training_pass_names() {
  return {kTrainingPassNames.begin(), kTrainingPassNames.end()};
}

long ConvShape::out_height() const {
  return (in_height + 2 * pad_height - filter_height) / stride_height + 1;
}

long ConvShape::out_width() const {
  return (in_width + 2 * pad_width - filter_width) / stride_width + 1;
}

void check_conv_shape(const ConvShape& s) {
  if (s.batch < 1 || s.in_channels < 1 || s.out_channels < 1 || s.stride_height < 1 ||
      s.stride_width < 1 || s.pad_height < 0 || s.pad_width < 0 ||
      s.in_height + 2 * s.pad_height < s.filter_height ||
      s.in_width + 2 * s.pad_width < s.filter_width) {
    throw std::invalid_argument("convolution shape has no output (check sizes, pads, strides)");
  }
  if (s.groups < 1 || s.in_channels % s.groups != 0 || s.out_channels % s.groups != 0) {
    throw std::invalid_argument("convolution groups must divide input and output channels");
  }
}

std::string to_string(ConvAlgorithm a) {
  switch (a) {
    case ConvAlgorithm::implicit_gemm:
      return "implicit_gemm";
    case ConvAlgorithm::winograd:
      return "winograd";
    case ConvAlgorithm::winograd_fused:
      return "winograd_fused";
  }
  throw std::logic_error("unhandled convolution algorithm");
}

std::optional<Seconds> conv_algorithm_time(const GpuSpec& gpu, const ConvModelParams& params,
                                           Seconds launch, const ConvShape& shape,
                                           TrainingPass pass, Precision precision,
                                           ConvAlgorithm algorithm) {
  check_conv_shape(shape);
  const ConvPrecisionParams& pp = params.of(precision);
  switch (algorithm) {
    case ConvAlgorithm::implicit_gemm:
      return implicit_gemm_time(gpu, params, pp, launch, shape, pass, precision);
    case ConvAlgorithm::winograd:
      if (!winograd_runs(shape, pp)) return std::nullopt;
      return winograd_time(gpu, params, pp, launch, shape, pass, precision);
    case ConvAlgorithm::winograd_fused:
      if (!winograd_fused_runs(shape, pass, pp)) return std::nullopt;
      return winograd_fused_time(gpu, params, pp, launch, shape, pass, precision);
  }
  throw std::logic_error("unhandled convolution algorithm");
}

double conv_workspace_bytes(const ConvShape& shape, TrainingPass pass, Precision precision,
                            ConvAlgorithm algorithm) {
  const double e = bytes_per_element(precision);
  switch (algorithm) {
    case ConvAlgorithm::implicit_gemm:
      return 0;
    case ConvAlgorithm::winograd:
      return e * winograd_transformed_elements(nonfused_winograd_work(shape, pass));
    case ConvAlgorithm::winograd_fused: {  // [?] the transformed filters, computed once
      const WinogradWork v = fused_winograd_work(shape, pass);
      return e * v.alpha2 * v.in * v.out;
    }
  }
  throw std::logic_error("unhandled convolution algorithm");
}

ConvChoice choose_conv_algorithm(const GpuSpec& gpu, const ConvModelParams& params, Seconds launch,
                                 const ConvShape& shape, TrainingPass pass, Precision precision,
                                 const ConvAlgorithmPolicy& policy) {
  ConvChoice best{ConvAlgorithm::implicit_gemm,
                  *conv_algorithm_time(gpu, params, launch, shape, pass, precision,
                                       ConvAlgorithm::implicit_gemm),
                  0};
  if (!policy.autotune) return best;
  for (ConvAlgorithm a : {ConvAlgorithm::winograd, ConvAlgorithm::winograd_fused}) {
    const auto t = conv_algorithm_time(gpu, params, launch, shape, pass, precision, a);
    const double workspace = conv_workspace_bytes(shape, pass, precision, a);
    if (t && t->value < best.time.value && workspace <= policy.workspace_limit_bytes) {
      best = {a, *t, workspace};
    }
  }
  return best;
}

}  // namespace gpuscale::compute
