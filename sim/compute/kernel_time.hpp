// The analytic kernel-time model: a roofline with fixed costs for GEMMs and streaming kernels,
// and the algorithm model of conv_model.hpp for convolutions.
//
//   kernel time = max(flops / (peak[precision] x compute_efficiency[class][precision]),
//                     bytes / (memory_bandwidth x copy_efficiency x memory_efficiency[class]))
//                 + launch_overhead
//   recurrent GEMM: the same with memory_efficiency x occupancy, where
//                 occupancy = min(1, ceil(weight_rows / slab_rows) / SMs)   (recurrent_bandwidth)
//   layer time  = sum of its kernels' times + framework_overhead   (one layer, one pass)
//
// peak, memory_bandwidth and copy_efficiency are the GPU's (gpu_spec.hpp); the efficiencies and
// overheads are AnalyticParams, read from a YAML file (sim/compute/analytic-v100.yaml) where
// each constant states its derivation from DeepBench's V100 kernel times; docs/compute-model.md
// gives the derivation and the model's error on those kernels.
#pragma once

#include <optional>

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
  gemm,            // dense matrix multiply (fully connected layers)
  elementwise,     // streaming kernels: activations, batch norm, pooling, additions, optimizer
  recurrent_gemm,  // one time step's GEMM against an LSTM's recurrent weights W_hh
  // A fused attention core (FlashAttention-2, cuDNN's fused attention) in forward and in
  // backward: a GEMM's roofline at the GPU's measured efficiency for it where its spec has one
  // (GpuSpec::fused_attention), else at the GEMM efficiency.
  fused_attention_forward,
  fused_attention_backward,
};
inline constexpr int kKernelClassCount = 8;

std::string to_string(KernelClass c);
KernelClass conv_kernel_class(TrainingPass pass);

struct KernelWork {
  KernelClass kind = KernelClass::elementwise;
  double flops = 0;  // floating-point operations (a multiply-add counts as 2)
  double bytes = 0;  // bytes read and written in device memory
  // recurrent_gemm: the rows of the weight matrix it streams (4h for an LSTM of h units), which
  // set how many SMs share the stream (recurrent_bandwidth); 0 for every other class.
  double weight_rows = 0;
  // A kernel that runs at another precision than its layer's (an FP8 layer's 16-bit attention
  // core); empty: the layer's.
  std::optional<Precision> precision = std::nullopt;
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

// One time step's GEMM against an LSTM's recurrent weights W_hh (4h x h) at batch n: forward
// gates = h_prev W_hh^T (m = n, n = 4h, k = h), backward-data dh = dgates W_hh (m = n, n = h,
// k = 4h); the same FLOPs and bytes either way, and the same 4h weight rows streamed.
KernelWork recurrent_gemm_work(double n, double h, Precision precision);

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
  // Recurrent GEMMs: the rows of W_hh one SM streams, and the fraction of its share of the copy
  // bandwidth (copy bandwidth / SMs) it reaches, by precision.
  double recurrent_slab_rows = 128;
  std::array<double, kPrecisionCount> recurrent_memory_efficiency{};
  ConvModelParams conv;

  // The roofline's efficiencies of a GEMM or a streaming kernel (a convolution has none: it is
  // timed by conv_model.hpp; a recurrent GEMM's bandwidth is recurrent_bandwidth's; asking
  // memory() of either is a logic_error).
  double compute(KernelClass c, Precision p) const;
  double memory(KernelClass c) const;
};

// The shipped constants: sim/compute/analytic-v100.yaml.
std::string shipped_analytic_params_path();

// Strict: every constant required, unknown keys rejected, units on overheads.
AnalyticParams load_analytic_params(const std::string& path);

// What a recurrent GEMM streams W_hh at (docs/compute-model.md#recurrent-layers): a GEMM of n
// rows (the batch, 128 or fewer) has one output tile per slab of W_hh's rows, each slab read by
// one SM, so that fewer slabs than SMs leave the rest idle:
//   copy_bandwidth x recurrent_memory_efficiency[p] x min(1, ceil(weight_rows / slab_rows) / SMs)
BytesPerSecond recurrent_bandwidth(const GpuSpec& gpu, const AnalyticParams& params,
                                   double weight_rows, Precision precision);

// The formula above for one GEMM or streaming kernel, at `layer_precision` unless the kernel
// names its own. Throws ConfigError when the GPU lacks the
// precision, std::invalid_argument for negative work, std::logic_error for a convolution.
Seconds analytic_kernel_time(const GpuSpec& gpu, const AnalyticParams& params,
                             const KernelWork& work, Precision layer_precision);

// One pass of one layer: its kernels plus the framework overhead, once.
Seconds analytic_layer_time(const GpuSpec& gpu, const AnalyticParams& params,
                            std::span<const KernelWork> kernels, Precision precision);

}  // namespace gpuscale::compute
