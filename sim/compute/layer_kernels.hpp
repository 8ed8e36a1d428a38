// What each layer of a workload runs on the GPU: the kernels of each of its passes at a batch
// size (docs/compute-model.md#from-layers-to-kernels). The analytic model times these kernels;
// the profile model uses their work to carry times measured on one GPU to another
// (projection.hpp).
//   conv  forward: cuDNN forward [+ bias add]; backward_data: cuDNN backward-data;
//         backward_weights: cuDNN backward-filter [+ bias gradient]
//   fc    every pass: GEMM m = batch, n = outputs, k = inputs [+ bias kernel as for conv]
//   other every pass: one elementwise kernel, flops = batch x per-sample FLOPs of the pass,
//         bytes = LayerCost::fwd_bytes(batch), or bwd_bytes(batch) split between the two
//         backward passes
//   input nothing.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::compute {

// One layer, everything but the batch size fixed.
struct LayerPlan {
  enum class Mapping { none, conv, fc, elementwise };
  Mapping mapping = Mapping::none;
  // The passes the layer has (wl::LayerCost::has_backward_*; none for the input layer). A pass
  // it lacks costs nothing, overheads included.
  std::array<bool, kTrainingPassCount> has_pass{};
  ConvShape conv;               // conv; `batch` is set per call
  double fc_inputs = 0;         // fc: k
  double fc_outputs = 0;        // fc: n
  double bias_outputs = 0;      // conv, fc with bias: output elements per sample, else 0
  double bias_params = 0;       // conv, fc with bias: bias elements
  // elementwise: work of pass p at batch N = N x per_sample[p] + per_batch[p]
  std::array<double, kTrainingPassCount> flops_per_sample{};
  std::array<double, kTrainingPassCount> bytes_per_sample{};
  std::array<double, kTrainingPassCount> bytes_per_batch{};

  bool has(TrainingPass pass) const { return has_pass[static_cast<int>(pass)]; }
};

// One plan per layer, parallel to Workload::layers. Throws std::invalid_argument when `costs`
// are not the workload's (another layer count).
std::vector<LayerPlan> plan_layers(const wl::Workload& workload, const wl::WorkloadCosts& costs);

// The kernels of one pass: one or two (the main kernel, then the bias kernel).
struct PassKernels {
  std::array<KernelWork, 2> work{};
  int count = 0;

  std::span<const KernelWork> kernels() const {
    return {work.data(), static_cast<std::size_t>(count)};
  }
};

// The kernels of `pass` of `plan` at `batch` (>= 1) and `precision`; none for a layer that maps
// to nothing (the input). Whether the layer has the pass is the caller's question (has()).
PassKernels kernels_of(const LayerPlan& plan, TrainingPass pass, int batch, Precision precision);

}  // namespace gpuscale::compute
