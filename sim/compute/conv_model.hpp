// How long one cuDNN convolution pass takes, by algorithm, and which algorithm the framework runs
// (docs/compute-model.md#convolutions-by-algorithm).
//
// Three algorithms, each timed from the work it does on the GPU's specs:
//
//   implicit GEMM (every shape; cuDNN's IMPLICIT_[PRECOMP_]GEMM, BWD_DATA_ALGO_1 and
//     BWD_FILTER_ALGO_1): the pass is a GEMM of M x N outputs reducing over R (forward:
//     M = N P Q, N = K, R = C R S; backward-data: M = N H W, N = C,
//     R = K ceil(R/stride) ceil(S/stride); backward-weights: M = K, N = C R S, R = N P Q, split
//     over R into one wave; on Tensor Cores C, and K for backward-data, count in whole channel
//     slices of `channel_slice`, and a 1x1 stride-2x2 backward-data has M = N P Q, the
//     positions a tap reaches, as cuDNN's dgrad_1x1_stride_2x2 kernel computes it). Each thread
//     block computes a whole tile of tile_m x tile_n outputs, so a GEMM pays for
//     ceil(M / tile_m) tile_m x ceil(N / tile_n) tile_n outputs (tile quantisation), and tiles
//     run in waves of one per SM, so a part-filled last wave costs a whole one (wave
//     quantisation); cuDNN has kernels of several tiles and the GEMM runs the fastest:
//       t = launch + fixed_cost
//           + min over tiles of max(F (1 + epilogue_steps / R) / (peak e[pass] u), bytes / (bw m))
//     u = tiles / (waves x SMs); F = 2 M' N' R over the tiled M', N'; bytes = input + filters +
//     output, once.
//   Winograd (FP32, stride 1, 3x3 or 5x5 filters, one group; cuDNN's WINOGRAD_NONFUSED):
//     input, filters and output go through F(m x m, r x r) transforms (F(4x4, 3x3), alpha = 6;
//     F(5x5, 5x5), alpha = 9, the 9x9 tiles of cuDNN's winogradForwardData9x9_5x5 kernels)
//     written to and read from memory, and the product is alpha^2 GEMMs:
//       t = launch + fixed_cost + 2 alpha^2 N T C K / (peak e u) + transformed bytes / (bw m)
//     T = ceil(P/m) ceil(Q/m) tiles per image, its GEMMs tiled as implicit GEMM's, e the 3x3 or
//     the 5x5 efficiency; its workspace holds the transformed tensors.
//   Fused Winograd (FP32, stride 1, 3x3 filters, one group, forward and backward-data;
//     cuDNN's WINOGRAD): F(2x2, 3x3), alpha^2 = 16, in one kernel that keeps the transformed
//     tiles in registers: an implicit GEMM of T x Co outputs reducing over 16 Ci, timed as
//     implicit GEMM is (its fixed cost, its memory term) at its own efficiency.
//
// The constants (efficiencies, fixed costs, epilogue, memory efficiency) are fitted to half of
// DeepBench's V100 rows (calibration/src/analytic_fit.hpp) and stored in analytic-v100.yaml.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "sim/compute/gpu_spec.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::compute {

enum class TrainingPass { forward, backward_data, backward_weights };
inline constexpr int kTrainingPassCount = 3;

std::string to_string(TrainingPass p);
std::vector<std::string> training_pass_names();

// A 2-D convolution in cuDNN's terms (NCHW input, K filters of C/groups x R x S; group g of
// `groups` convolves input channels g C/groups .. (g+1) C/groups - 1 into K/groups outputs).
struct ConvShape {
  long batch = 1;           // N
  long in_channels = 1;     // C
  long in_height = 1;       // H
  long in_width = 1;        // W
  long out_channels = 1;    // K
  long filter_height = 1;   // R
  long filter_width = 1;    // S
  long pad_height = 0;
  long pad_width = 0;
  long stride_height = 1;
  long stride_width = 1;
  long groups = 1;          // divides both C and K

  long out_height() const;  // P = (H + 2 pad_h - R) / stride_h + 1
  long out_width() const;   // Q = (W + 2 pad_w - S) / stride_w + 1
};

// Throws std::invalid_argument for a shape with no output or groups that divide neither C nor K.
void check_conv_shape(const ConvShape& shape);

enum class ConvAlgorithm { implicit_gemm, winograd, winograd_fused };
inline constexpr int kConvAlgorithmCount = 3;
std::string to_string(ConvAlgorithm a);

// The constants of one precision.
struct ConvPrecisionParams {
  std::array<double, kTrainingPassCount> gemm_efficiency{};  // achieved / peak, per pass
  Seconds gemm_fixed_cost;        // per call, beyond the launch
  double epilogue_steps = 0;      // a tile's fixed work, in reduction steps
  double memory_efficiency = 1;   // achieved / the GPU's copy bandwidth
  std::optional<double> winograd_efficiency;  // absent: the precision runs no Winograd
  // F(5x5, 5x5)'s GEMMs, each over 81 transformed points of 9x9 tiles: a kernel family of its
  // own, fitted apart from F(4x4, 3x3)'s; present whenever winograd_efficiency is.
  std::optional<double> winograd_5x5_efficiency;
  Seconds winograd_fixed_cost;
  std::optional<double> winograd_fused_efficiency;  // absent: no fused F(2x2, 3x3) Winograd
  // Tensor Cores take channels in multiples of this; cuDNN 7 pads C and K up to it (1: none).
  long channel_multiple = 1;
  // The channels an implicit GEMM kernel's main loop takes per filter tap (its tile's reduction
  // depth): a layer with fewer channels still pays for the whole slice at every tap (1: none).
  long channel_slice = 1;
};

// The outputs one thread block of a GEMM kernel computes: tile_m rows by tile_n columns.
struct GemmTile {
  long m = 128;
  long n = 64;
};

struct ConvModelParams {
  // The tiles cuDNN's GEMM kernels come in; each GEMM runs the one that finishes first.
  std::vector<GemmTile> tiles = std::vector<GemmTile>(1);  // one of 128 x 64
  std::array<ConvPrecisionParams, kPrecisionCount> precision{};

  const ConvPrecisionParams& of(Precision p) const { return precision[static_cast<int>(p)]; }
};

// How the framework picks an algorithm (its `execution.cudnn_autotune` and workspace limit):
// autotuning times every algorithm whose workspace fits and keeps the fastest (MXNet 1.1's
// default, cuDNN's Find; PyTorch with cudnn.benchmark); without it, cuDNN's heuristic.
struct ConvAlgorithmPolicy {
  bool autotune = true;
  double workspace_limit_bytes = 1024.0 * 1024 * 1024;
};

struct ConvChoice {
  ConvAlgorithm algorithm = ConvAlgorithm::implicit_gemm;
  Seconds time;             // launch included
  double workspace_bytes = 0;
};

// The time of `pass` by `algorithm`, or none where the algorithm cannot run the shape.
std::optional<Seconds> conv_algorithm_time(const GpuSpec& gpu, const ConvModelParams& params,
                                           Seconds launch_overhead, const ConvShape& shape,
                                           TrainingPass pass, Precision precision,
                                           ConvAlgorithm algorithm);

// The workspace `algorithm` needs for `pass` (0 for implicit GEMM).
double conv_workspace_bytes(const ConvShape& shape, TrainingPass pass, Precision precision,
                            ConvAlgorithm algorithm);

// The algorithm the policy runs and its time. Autotuning keeps the fastest algorithm whose
// workspace fits the limit. The heuristic is taken as implicit GEMM [?]: cuDNN 7 does not
// document its heuristic, and implicit GEMM is the family that runs every shape without
// workspace.
ConvChoice choose_conv_algorithm(const GpuSpec& gpu, const ConvModelParams& params,
                                 Seconds launch_overhead, const ConvShape& shape,
                                 TrainingPass pass, Precision precision,
                                 const ConvAlgorithmPolicy& policy);

}  // namespace gpuscale::compute
