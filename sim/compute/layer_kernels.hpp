// What each layer of a workload runs on the GPU: the kernels of each of its passes at a batch
// size (docs/compute-model.md#from-layers-to-kernels). The analytic model times these kernels;
// the profile model uses their work to carry times measured on one GPU to another
// (projection.hpp).
//   conv  forward: cuDNN forward [+ bias add]; backward_data: cuDNN backward-data;
//         backward_weights: cuDNN backward-filter [+ bias gradient]
//   fc    every pass: GEMM m = batch, n = outputs, k = inputs [+ bias kernel as for conv]
//   attention  forward: projections GEMM, scores batched GEMM, softmax, P V batched GEMM
//         [+ bias]; backward_data: projections GEMM, two batched GEMMs of twice the forward's
//         work each, softmax backward; backward_weights: projections GEMM [+ bias gradient]
//         (additive: an elementwise score kernel in place of the scores GEMM); fused
//         (FlashAttention-2): the projections GEMM, then one core kernel per pass, timed as a
//         GEMM, of the two batched GEMMs' FLOPs forward and 2.5x that backward (the scores
//         recomputed), moving Q, K, V, the context and the logsumexp (and their gradients)
//   lstm  per direction: forward one input GEMM, then per step a recurrent GEMM and a
//         pointwise kernel; backward_data per step pointwise + dh GEMM, then a dx GEMM;
//         backward_weights dW_ih, dW_hh GEMMs + bias gradient
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
  enum class Mapping { none, conv, fc, attention, lstm, elementwise };
  Mapping mapping = Mapping::none;
  // The passes the layer has (wl::LayerCost::has_backward_*; none for the input layer). A pass
  // it lacks costs nothing, overheads included.
  std::array<bool, kTrainingPassCount> has_pass{};
  ConvShape conv;               // conv; `batch` is set per call
  double fc_inputs = 0;         // fc: k
  double fc_outputs = 0;        // fc: n
  // attention: queries, keys (= values), features, heads; additive: Bahdanau's score. lstm:
  // tq time steps, d hidden units, lstm_inputs features in, directions 1 or 2.
  double tq = 0, tk = 0, d = 0, heads = 0;
  double kv_width = 0;          // attention: the key and value projections' width (d, or less)
  bool additive = false;
  bool fused = false;           // attention: one fused core kernel per pass (wl::LayerParams)
  double lstm_inputs = 0, directions = 0;
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

// The kernels of one pass: one or two (the main kernel, then the bias kernel); a few for
// attention; an LSTM's per time step.
struct PassKernels {
  std::vector<KernelWork> work;

  std::span<const KernelWork> kernels() const { return work; }
};

// The kernels of `pass` of `plan` at `batch` (>= 1) and `precision`; none for a layer that maps
// to nothing (the input). Whether the layer has the pass is the caller's question (has()).
PassKernels kernels_of(const LayerPlan& plan, TrainingPass pass, int batch, Precision precision);

// One direction of an LSTM of h units over t steps at batch n, less its input projection (the
// input GEMM forward, the dx GEMM backward-data, dW_ih backward-weights): what cuDNN runs with
// CUDNN_SKIP_INPUT, as DeepBench timed it (calibration/src/deepbench.hpp).
PassKernels lstm_recurrent_kernels(double n, double h, double t, TrainingPass pass,
                                   Precision precision);

}  // namespace gpuscale::compute
