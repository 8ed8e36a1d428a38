// The analytic kernel-time model: a roofline with fixed costs for GEMMs and streaming kernels,
// and the algorithm model of conv_model.hpp for convolutions.
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
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "sim/compute/conv_model.hpp"
#include "sim/compute/gpu_spec.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::compute {

// The kinds of kernel. A convolution pass is timed by conv_model.hpp, by the algorithm the
// framework runs; GEMMs and streaming kernels by the roofline above.
enum class KernelClass {
  conv_forward,
  conv_backward_data,
  conv_backward_weights,
  gemm,         // dense matrix multiply (fully connected layers)
  elementwise,  // streaming kernels: activations, batch norm, pooling, additions, optimizer
};
inline constexpr int kKernelClassCount = 5;

std::string to_string(KernelClass c);
KernelClass conv_kernel_class(TrainingPass pass);

struct KernelWork {
  KernelClass kind = KernelClass::elementwise;
  double flops = 0;  // floating-point operations (a multiply-add counts as 2)
  double bytes = 0;  // bytes read and written in device memory
};

// FLOPs 2 N K (C/groups) R S P Q for every pass, whatever algorithm runs; bytes: input (N C H W)
// + filters (K (C/groups) R S) + output (N K P Q) elements, each moved once. Every pass touches
// the same three tensors (forward reads x and w and writes y; backward-data reads dy and w,
// writes dx; backward-weights reads x and dy, writes dw). The projection between GPUs uses this
// work (projection.hpp). Throws std::invalid_argument for a shape with no output or groups that
// do not divide C and K.
KernelWork conv_kernel_work(const ConvShape& shape, TrainingPass pass, Precision precision);

// C[m x n] = A[m x k] B[k x n]: 2 m n k FLOPs, (m k + k n + m n) elements moved.
KernelWork gemm_kernel_work(double m, double n, double k, Precision precision);

// The constants of the model; see the file they come from for each one's derivation.
struct AnalyticParams {
  std::string name;
  Origin origin;
  Seconds launch_overhead;     // per kernel
  Seconds framework_overhead;  // per layer and pass
  // GEMMs: achieved FLOP rate / peak, by precision, and achieved / copy bandwidth
  std::array<double, kPrecisionCount> gemm_efficiency{};
  double gemm_memory_efficiency = 1;
  double elementwise_memory_efficiency = 1;
  ConvModelParams conv;

  // The roofline's efficiencies of a GEMM or a streaming kernel (a convolution has none: it is
  // timed by conv_model.hpp; asking is a logic_error).
  double compute(KernelClass c, Precision p) const;
  double memory(KernelClass c) const;
};

// The shipped constants: sim/compute/analytic-v100.yaml.
std::string shipped_analytic_params_path();

// Strict: every constant required, unknown keys rejected, units on overheads.
AnalyticParams load_analytic_params(const std::string& path);

// The formula above for one GEMM or streaming kernel. Throws ConfigError when the GPU lacks the
// precision, std::invalid_argument for negative work, std::logic_error for a convolution.
Seconds analytic_kernel_time(const GpuSpec& gpu, const AnalyticParams& params,
                             const KernelWork& work, Precision precision);

// One pass of one layer: its kernels plus the framework overhead, once.
Seconds analytic_layer_time(const GpuSpec& gpu, const AnalyticParams& params,
                            std::span<const KernelWork> kernels, Precision precision);

}  // namespace gpuscale::compute
