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

// The fraction of the SMs' slots that `tiles` blocks keep busy over the waves they need.
double wave_utilisation(double tiles, int sm_count) {
  const double waves = ceil_div(tiles, sm_count);
  return tiles / (waves * sm_count);
}

double round_up(long value, long multiple) {
  return static_cast<double>((value + multiple - 1) / multiple * multiple);
}

// The implicit GEMM of one pass: M x N outputs reducing over R, in `groups` independent GEMMs.
struct GemmView {
  double m = 0, n = 0, r = 0;
};

// Backward-data computes the input gradient at every input position from the filter taps that
// can reach it: with a stride s, ceil(R / s) x ceil(S / s) of them, a count the kernel's loop
// runs for every position alike (it does not skip the positions no tap reaches: DeepBench's
// strided 1x1 backward-data rows take as long as their stride-1 twins of the same input size).
GemmView gemm_view(double n, double c, double h, double w, double k, double r, double s, double p,
                   double q, double taps, TrainingPass pass) {
  switch (pass) {
    case TrainingPass::forward:
      return {n * p * q, k, c * r * s};
    case TrainingPass::backward_data:
      return {n * h * w, c, k * taps};
    case TrainingPass::backward_weights:
      return {k, c * r * s, n * p * q};
  }
  throw std::logic_error("unhandled training pass");
}

// The compute time of `groups` GEMMs of m x n outputs reducing over r at `flops_per_s`, run by
// whichever of the tiles finishes first. A tile computes all its tile_m x tile_n outputs even
// where the GEMM ends inside it; with `split_to_one_wave` the reduction is split into as many
// parts as keep one wave of blocks on the SMs (backward-weights).
double tiled_gemm_seconds(const GpuSpec& gpu, const ConvModelParams& params, double groups,
                          double m, double n, double r, double flops_per_s,
                          bool split_to_one_wave) {
  double best = std::numeric_limits<double>::infinity();
  for (const GemmTile& tile : params.tiles) {
    const double rows = ceil_div(m, tile.m), columns = ceil_div(n, tile.n);
    double blocks = groups * rows * columns;
    if (split_to_one_wave) blocks *= std::max(1.0, std::floor(gpu.sm_count / blocks));
    const double flops = 2 * groups * rows * tile.m * columns * tile.n * r;
    best = std::min(best, flops / (flops_per_s * wave_utilisation(blocks, gpu.sm_count)));
  }
  return best;
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
  const GemmView v = gemm_view(n, c, h, w, k, r, sw, p, q, taps, pass);
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

// F(m x m, r x r): m = 4 for 3x3 filters, 2 for 5x5; alpha = m + r - 1 = 6 in both.
struct WinogradWork {
  double alpha2 = 0;       // alpha^2 transformed points per tile
  double tiles = 0;        // N x ceil(P/m) x ceil(Q/m)
  double in = 0, out = 0;  // channels of the pass's input and output (swapped for backward-data)
};

WinogradWork winograd_work(const ConvShape& s, TrainingPass pass) {
  const double m = s.filter_height == 3 ? 4 : 2;
  const double alpha = m + static_cast<double>(s.filter_height) - 1;
  WinogradWork v;
  v.alpha2 = alpha * alpha;
  v.tiles = s.batch * ceil_div(s.out_height(), m) * ceil_div(s.out_width(), m);
  v.in = pass == TrainingPass::backward_data ? s.out_channels : s.in_channels;
  v.out = pass == TrainingPass::backward_data ? s.in_channels : s.out_channels;
  return v;
}

// The transformed input, filters and output, each written by one kernel and read by the next.
double winograd_transformed_elements(const WinogradWork& v) {
  return v.alpha2 * (v.tiles * v.in + v.in * v.out + v.tiles * v.out);
}

Seconds winograd_time(const GpuSpec& gpu, const ConvModelParams& params,
                      const ConvPrecisionParams& pp, Seconds launch, const ConvShape& s,
                      TrainingPass pass, Precision precision) {
  const WinogradWork v = winograd_work(s, pass);
  const double compute_s =
      tiled_gemm_seconds(gpu, params, v.alpha2, v.tiles, v.out, v.in,
                         gpu.peak(precision).value * *pp.winograd_efficiency, false);
  const double plain =
      static_cast<double>(s.batch) *
      (s.in_channels * s.in_height * s.in_width + s.out_channels * s.out_height() * s.out_width());
  const double bytes =
      bytes_per_element(precision) * (plain + 2 * winograd_transformed_elements(v));
  const double memory_s = bytes / (gpu.copy_bandwidth().value * pp.memory_efficiency);
  return {launch.value + pp.winograd_fixed_cost.value + compute_s + memory_s};
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
  return a == ConvAlgorithm::winograd ? "winograd" : "implicit_gemm";
}

std::optional<Seconds> conv_algorithm_time(const GpuSpec& gpu, const ConvModelParams& params,
                                           Seconds launch, const ConvShape& shape,
                                           TrainingPass pass, Precision precision,
                                           ConvAlgorithm algorithm) {
  check_conv_shape(shape);
  const ConvPrecisionParams& pp = params.of(precision);
  if (algorithm == ConvAlgorithm::implicit_gemm) {
    return implicit_gemm_time(gpu, params, pp, launch, shape, pass, precision);
  }
  if (!winograd_runs(shape, pp)) return std::nullopt;
  return winograd_time(gpu, params, pp, launch, shape, pass, precision);
}

double conv_workspace_bytes(const ConvShape& shape, TrainingPass pass, Precision precision,
                            ConvAlgorithm algorithm) {
  if (algorithm == ConvAlgorithm::implicit_gemm) return 0;
  return bytes_per_element(precision) * winograd_transformed_elements(winograd_work(shape, pass));
}

ConvChoice choose_conv_algorithm(const GpuSpec& gpu, const ConvModelParams& params, Seconds launch,
                                 const ConvShape& shape, TrainingPass pass, Precision precision,
                                 const ConvAlgorithmPolicy& policy) {
  ConvChoice best{ConvAlgorithm::implicit_gemm,
                  *conv_algorithm_time(gpu, params, launch, shape, pass, precision,
                                       ConvAlgorithm::implicit_gemm),
                  0};
  if (!policy.autotune) return best;
  const auto winograd =
      conv_algorithm_time(gpu, params, launch, shape, pass, precision, ConvAlgorithm::winograd);
  const double workspace = conv_workspace_bytes(shape, pass, precision, ConvAlgorithm::winograd);
  if (winograd && winograd->value < best.time.value && workspace <= policy.workspace_limit_bytes) {
    best = {ConvAlgorithm::winograd, *winograd, workspace};
  }
  return best;
}

}  // namespace gpuscale::compute
