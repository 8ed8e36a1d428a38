// The analytic kernel-time model: a roofline with fixed costs.
//
//   kernel time = max(flops / (peak[precision] x compute_efficiency[class][precision]),
//                     bytes / (memory_bandwidth x copy_efficiency x memory_efficiency[class]))
//                 + launch_overhead
//   layer time  = sum of its kernels' times + framework_overhead   (one layer, one pass)
//
// peak, memory_bandwidth and copy_efficiency are the GPU's (gpu_spec.hpp); the efficiencies and
// overheads are AnalyticParams, read from a YAML file (sim/compute/analytic-v100.yaml) where
// each constant states its derivation from DeepBench's V100 kernel times; docs/compute-model.md
// gives the derivation and the model's error on those kernels.
//
// FLOPs count direct convolution (2 N K C R S P Q) whatever algorithm cuDNN picks, so a class
// whose kernels use Winograd or FFT may have a compute efficiency above 1.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/compute/gpu_spec.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace gpuscale::compute {

// The kinds of kernel whose efficiencies differ. A convolution with a stride-1 filter of at
// least 2x2 is a `*_winograd` class: those are the shapes for which cuDNN 7 offers Winograd and
// FFT algorithms (it chose them for 31 of the 35 such FP32 DeepBench rows, and implicit GEMM for
// every other shape). The class follows from the shape (conv_kernel_class), not from a guess of
// the algorithm.
enum class KernelClass {
  conv_forward,
  conv_backward_data,
  conv_backward_weights,
  conv_forward_winograd,
  conv_backward_data_winograd,
  conv_backward_weights_winograd,
  gemm,         // dense matrix multiply (fully connected layers)
  elementwise,  // streaming kernels: activations, batch norm, pooling, additions, optimizer
};
inline constexpr int kKernelClassCount = 8;

std::string to_string(KernelClass c);
std::optional<KernelClass> kernel_class_from_string(const std::string& name);
std::vector<std::string> kernel_class_names();

// The passes of one layer in a training iteration.
enum class TrainingPass { forward, backward_data, backward_weights };
inline constexpr int kTrainingPassCount = 3;

std::string to_string(TrainingPass p);
std::optional<TrainingPass> training_pass_from_string(const std::string& name);
std::vector<std::string> training_pass_names();

struct KernelWork {
  KernelClass kind = KernelClass::elementwise;
  double flops = 0;  // floating-point operations (a multiply-add counts as 2)
  double bytes = 0;  // bytes read and written in device memory
};

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

KernelClass conv_kernel_class(const ConvShape& shape, TrainingPass pass);

// FLOPs 2 N K (C/groups) R S P Q for every pass; bytes: input (N C H W) + filters
// (K (C/groups) R S) + output (N K P Q) elements, each moved once. Every pass touches the same
// three tensors (forward reads x and w and writes y; backward-data reads dy and w, writes dx;
// backward-weights reads x and dy, writes dw). Throws std::invalid_argument for a shape with no
// output or groups that do not divide C and K.
KernelWork conv_kernel_work(const ConvShape& shape, TrainingPass pass, Precision precision);

// C[m x n] = A[m x k] B[k x n]: 2 m n k FLOPs, (m k + k n + m n) elements moved.
KernelWork gemm_kernel_work(double m, double n, double k, Precision precision);

// The constants of the model; see the file they come from for each one's derivation.
struct AnalyticParams {
  std::string name;
  Origin origin;
  Seconds launch_overhead;     // per kernel
  Seconds framework_overhead;  // per layer and pass
  // achieved FLOP rate / peak, by [class][precision]
  std::array<std::array<double, kPrecisionCount>, kKernelClassCount> compute_efficiency{};
  // achieved bandwidth / the GPU's copy bandwidth, by [class]
  std::array<double, kKernelClassCount> memory_efficiency{};

  double compute(KernelClass c, Precision p) const {
    return compute_efficiency[static_cast<int>(c)][static_cast<int>(p)];
  }
  double memory(KernelClass c) const { return memory_efficiency[static_cast<int>(c)]; }
};

// The shipped constants: sim/compute/analytic-v100.yaml.
std::string shipped_analytic_params_path();

// Strict: every class under every precision and under memory_efficiency, units on overheads.
AnalyticParams load_analytic_params(const std::string& path);

// The formula above for one kernel. Throws ConfigError when the GPU lacks the precision,
// std::invalid_argument for negative work.
Seconds analytic_kernel_time(const GpuSpec& gpu, const AnalyticParams& params,
                             const KernelWork& work, Precision precision);

// One pass of one layer: its kernels plus the framework overhead, once.
Seconds analytic_layer_time(const GpuSpec& gpu, const AnalyticParams& params,
                            std::span<const KernelWork> kernels, Precision precision);

}  // namespace gpuscale::compute
