#include "sim/compute/layer_kernels.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace gpuscale::compute {
namespace {

constexpr int kForward = static_cast<int>(TrainingPass::forward);
constexpr int kBackwardData = static_cast<int>(TrainingPass::backward_data);
constexpr int kBackwardWeights = static_cast<int>(TrainingPass::backward_weights);

std::array<bool, kTrainingPassCount> passes_of(const wl::Layer& layer, const wl::LayerCost& cost) {
  if (layer.type == wl::LayerType::Input) return {false, false, false};
  return {true, cost.has_backward_data, cost.has_backward_weights};
}

LayerPlan plan_layer(const wl::Workload& workload, const wl::WorkloadCosts& costs, int index) {
  const wl::Layer& layer = workload.layers[static_cast<size_t>(index)];
  const wl::LayerCost& cost = costs.layers[static_cast<size_t>(index)];
  const wl::LayerParams& p = layer.params;
  LayerPlan plan;
  plan.has_pass = passes_of(layer, cost);
  switch (layer.type) {
    case wl::LayerType::Input:
      return plan;
    case wl::LayerType::Conv: {
      plan.mapping = LayerPlan::Mapping::conv;
      ConvShape& s = plan.conv;
      s.in_channels = layer.input.channels;
      s.in_height = layer.input.height;
      s.in_width = layer.input.width;
      s.out_channels = p.filters;
      s.filter_height = p.kernel_h;
      s.filter_width = p.kernel_w;
      s.pad_height = p.pad_h;
      s.pad_width = p.pad_w;
      s.stride_height = p.stride_h;
      s.stride_width = p.stride_w;
      s.groups = p.groups;
      if (s.out_height() != layer.output.height || s.out_width() != layer.output.width) {
        throw std::logic_error(fmt::format("layer {}: convolution output {}x{} differs from the "
                                           "inferred shape {}",
                                           layer.name, s.out_height(), s.out_width(),
                                           wl::to_string(layer.output)));
      }
      break;
    }
    case wl::LayerType::Fc:
      plan.mapping = LayerPlan::Mapping::fc;
      plan.fc_inputs = static_cast<double>(layer.input.elements());
      plan.fc_outputs = static_cast<double>(p.filters);
      break;
    case wl::LayerType::Attention: {
      plan.mapping = LayerPlan::Mapping::attention;
      const wl::Shape& kv = workload.layers[static_cast<size_t>(layer.inputs.back())].output;
      plan.tq = static_cast<double>(layer.input.height * layer.input.width);
      plan.tk = static_cast<double>(kv.height * kv.width);
      plan.d = static_cast<double>(layer.input.channels);
      plan.heads = p.heads;
      plan.kv_width = wl::attention_kv_width(layer);
      plan.additive = p.additive;
      plan.fused = p.fused;
      if (p.bias && !p.additive) {
        // One bias add per projected element: the four projections' outputs.
        plan.bias_outputs = 2 * plan.tq * plan.d + 2 * plan.tk * plan.kv_width;
        plan.bias_params = 2 * plan.d + 2 * plan.kv_width;
      }
      return plan;
    }
    case wl::LayerType::Lstm:
      plan.mapping = LayerPlan::Mapping::lstm;
      plan.tq = static_cast<double>(layer.input.height * layer.input.width);
      plan.d = static_cast<double>(p.filters);
      plan.lstm_inputs = static_cast<double>(layer.input.channels);
      plan.directions = p.bidirectional ? 2 : 1;
      return plan;
    default: {
      plan.mapping = LayerPlan::Mapping::elementwise;
      const double element_bytes = wl::bytes_per_element(workload.precision);
      double in_elements = 0;
      for (int input : layer.inputs) {
        in_elements +=
            static_cast<double>(workload.layers[static_cast<size_t>(input)].output.elements());
      }
      plan.flops_per_sample = {cost.fwd_flops, cost.bwd_data_flops, cost.bwd_weight_flops};
      plan.bytes_per_sample[kForward] = cost.fwd_activation_bytes;
      plan.bytes_per_batch[kForward] = cost.param_read_bytes;
      // bwd_bytes(N) split so that the two passes sum to it: the weights pass re-reads the input
      // and writes the parameter gradients; the data pass reads the output gradient and the
      // parameters and writes the input gradient. Without a data pass, the weights pass reads
      // the output gradient too.
      double weights_per_sample = 0, weights_per_batch = 0;
      if (cost.has_backward_weights) {
        weights_per_sample = cost.has_backward_data ? in_elements * element_bytes
                                                    : cost.bwd_activation_bytes;
        weights_per_batch = cost.param_bytes;
        plan.bytes_per_sample[kBackwardWeights] = weights_per_sample;
        plan.bytes_per_batch[kBackwardWeights] = weights_per_batch;
      }
      if (cost.has_backward_data) {
        plan.bytes_per_sample[kBackwardData] = cost.bwd_activation_bytes - weights_per_sample;
        plan.bytes_per_batch[kBackwardData] =
            cost.param_read_bytes + cost.param_bytes - weights_per_batch;
      }
      return plan;
    }
  }
  if (p.bias) {
    plan.bias_outputs = static_cast<double>(layer.output.elements());
    plan.bias_params = static_cast<double>(p.filters);
  }
  return plan;
}

KernelWork sum(KernelWork a, const KernelWork& b) {
  a.flops += b.flops;
  a.bytes += b.bytes;
  return a;
}

KernelWork times(KernelWork a, double count) {
  a.flops *= count;
  a.bytes *= count;
  return a;
}

// Multi-head attention at batch n (docs/compute-model.md#from-layers-to-kernels). The four
// projections are GEMMs of n Tq (Q, output) or n Tk (K, V) rows, d x d (K and V d x kv_width
// with grouped-query attention), timed as one launch, as a fused QKV projection runs them [?];
// each pass has the same GEMMs (dX = dY W^T, dW = X^T dY).
// The core is batched GEMMs of n h problems: S = Q K^T (Tq x Tk x d/h) and O = P V
// (Tq x d/h x Tk); backward-data runs dP = dO V^T with dV = P^T dO, then dQ = dS K with
// dK = dS^T Q: each pair twice its forward GEMM's work. The softmax between them is
// elementwise: 5 FLOPs per probability forward (read S, write P), 3 backward (read P and dP,
// write dS).
// GNMT's additive attention at batch n: the Q and K projections as one GEMM launch; the score
// v . tanh(q + k + b) over the n Tq Tk d tensor as one elementwise kernel (5 FLOPs per element:
// two adds, tanh, multiply-add; the tensor written and read); softmax; the context P K as n
// batched GEMMs (Tq x d x Tk). Backward-data: the projections, the context pair, softmax,
// the score's backward (6 FLOPs per element, 3 elements moved); backward-weights: the
// projections and dv, db (3 FLOPs per element, the tanh tensor read).
void add_additive_attention_kernels(const LayerPlan& plan, TrainingPass pass, double n,
                                    Precision precision, PassKernels& out) {
  out.work.push_back(sum(gemm_kernel_work(n * plan.tq, plan.d, plan.d, precision),
                         gemm_kernel_work(n * plan.tk, plan.d, plan.d, precision)));
  const double e = bytes_per_element(precision);
  const double pairs = n * plan.tq * plan.tk;
  const double tensor = pairs * plan.d;
  if (pass == TrainingPass::backward_weights) {
    out.work.push_back({KernelClass::elementwise, 3 * tensor, tensor * e});
    return;
  }
  const KernelWork context = times(gemm_kernel_work(plan.tq, plan.d, plan.tk, precision), n);
  if (pass == TrainingPass::forward) {
    out.work.push_back({KernelClass::elementwise, 5 * tensor, 2 * tensor * e});
    out.work.push_back({KernelClass::elementwise, 5 * pairs, 2 * pairs * e});
    out.work.push_back(context);
  } else {
    out.work.push_back(times(context, 2));
    out.work.push_back({KernelClass::elementwise, 3 * pairs, 3 * pairs * e});
    out.work.push_back({KernelClass::elementwise, 6 * tensor, 3 * tensor * e});
  }
}

// An LSTM at batch n, as cuDNN's standard algorithm runs one: per direction, one GEMM for the
// input projections of all T steps (m = n T, n = 4h, k = x), then the recurrent part
// (lstm_recurrent_kernels). Backward-data ends with one GEMM for dx; backward-weights starts
// with dW_ih (k = n T).
void add_lstm_kernels(const LayerPlan& plan, TrainingPass pass, double n, Precision precision,
                      PassKernels& out) {
  const double h = plan.d, x = plan.lstm_inputs, t = plan.tq;
  for (int direction = 0; direction < static_cast<int>(plan.directions); ++direction) {
    if (pass == TrainingPass::forward) {
      out.work.push_back(gemm_kernel_work(n * t, 4 * h, x, precision));
    }
    if (pass == TrainingPass::backward_weights) {
      out.work.push_back(gemm_kernel_work(4 * h, x, n * t, precision));
    }
    const PassKernels recurrent = lstm_recurrent_kernels(n, h, t, pass, precision);
    out.work.insert(out.work.end(), recurrent.work.begin(), recurrent.work.end());
    if (pass == TrainingPass::backward_data) {
      out.work.push_back(gemm_kernel_work(n * t, x, 4 * h, precision));
    }
  }
}

// A fused attention core at batch n (FlashAttention-2: Dao, "FlashAttention-2: Faster
// Attention with Better Parallelism and Work Partitioning", 2023, arXiv 2307.08691; cuDNN's
// fused attention, which Transformer Engine runs, computes the same): one kernel per pass that
// keeps each block of scores and probabilities on chip and never writes the Tq x Tk tensors.
//   forward:  FLOPs of S = Q K^T and O = P V, 2 x 2 n h Tq Tk (d/h) = 4 n Tq Tk d; it reads
//             Q (n Tq d), K and V (n Tk kv_width each) and writes O (n Tq d) and the softmax's
//             logsumexp L (n h Tq, fp32), which Algorithm 1 writes to HBM for the backward.
//   backward-data: 2.5 x the forward's FLOPs: S recomputed, then dV, dP, dQ, dK, five GEMMs
//             of the forward's two (sec. 3.1.2, Algorithm 2); it reads Q, K, V, O, dO and L
//             and writes dQ, dK, dV.
// The softmax's exponentials, inside the kernel, are not counted: they do not bind against
// the GEMMs at head widths of 64 and more [?]. The kernel is timed as a GEMM's roofline, at the
// GPU's measured fused-attention efficiency where its spec has one (which counts every score
// too), else at the GEMM efficiency; its causal mask's skipped blocks are not modelled (every
// score counted, as the unfused path counts them).
KernelWork fused_attention_core(const LayerPlan& plan, TrainingPass pass, double n,
                                Precision precision) {
  // L, one per query and head, in fp32: flash-attn's mha_fwd allocates softmax_lse as
  // {batch, heads, seqlen_q} of kFloat (csrc/flash_attn/flash_api.cpp).
  constexpr double kLogsumexpBytes = 4;
  const double e = bytes_per_element(precision);
  const double q = n * plan.tq * plan.d, kv = n * plan.tk * plan.kv_width;
  const double forward_flops = 4 * n * plan.tq * plan.tk * plan.d;
  const double logsumexp = n * plan.heads * plan.tq * kLogsumexpBytes;
  if (pass == TrainingPass::forward) {
    return {KernelClass::fused_attention_forward, forward_flops, (2 * q + 2 * kv) * e + logsumexp};
  }
  return {KernelClass::fused_attention_backward, 2.5 * forward_flops,
          (4 * q + 4 * kv) * e + logsumexp};
}

void add_attention_kernels(const LayerPlan& plan, TrainingPass pass, double n,
                           Precision precision, PassKernels& out) {
  if (plan.additive) {
    add_additive_attention_kernels(plan, pass, n, precision, out);
    return;
  }
  const KernelWork projections =
      sum(times(gemm_kernel_work(n * plan.tq, plan.d, plan.d, precision), 2),
          times(gemm_kernel_work(n * plan.tk, plan.kv_width, plan.d, precision), 2));
  out.work.push_back(projections);
  if (pass == TrainingPass::backward_weights) return;
  // Under FP8 only the projections run in FP8: Transformer Engine's DotProductAttention stays
  // BF16 unless fp8_dpa (off by default; TransformerEngine@v1.8 common/recipe/__init__.py:106-144).
  const Precision core = precision == Precision::fp8 ? Precision::bf16 : precision;
  const size_t first_core_kernel = out.work.size();
  if (plan.fused) {
    out.work.push_back(fused_attention_core(plan, pass, n, core));
  } else {
    const double head_d = plan.d / plan.heads;
    const double problems = n * plan.heads;
    const KernelWork scores = times(gemm_kernel_work(plan.tq, plan.tk, head_d, core), problems);
    const KernelWork weighted = times(gemm_kernel_work(plan.tq, head_d, plan.tk, core), problems);
    const double probabilities = problems * plan.tq * plan.tk;
    const double element_bytes = bytes_per_element(core);
    if (pass == TrainingPass::forward) {
      out.work.push_back(scores);
      out.work.push_back(
          {KernelClass::elementwise, 5 * probabilities, 2 * probabilities * element_bytes});
      out.work.push_back(weighted);
    } else {
      out.work.push_back(times(weighted, 2));
      out.work.push_back(
          {KernelClass::elementwise, 3 * probabilities, 3 * probabilities * element_bytes});
      out.work.push_back(times(scores, 2));
    }
  }
  if (core != precision) {
    for (size_t k = first_core_kernel; k < out.work.size(); ++k) out.work[k].precision = core;
  }
}

}  // namespace

// Per step a recurrent GEMM (recurrent_gemm_work: m = n, n = 4h, k = h) and a pointwise kernel
// (17 FLOPs per unit: biases, gates, cell; the 4h gates and c_prev read, c and h written). The
// recurrent GEMMs run one after the other, each paying its launch and reading all of W_hh with
// only as many SMs as it has slabs of W_hh's rows (kernel_time.hpp, recurrent_bandwidth): what
// makes an LSTM at small batch slow. Backward-data mirrors it: per step the pointwise backward
// (9 elements moved per unit) and dh = dgates W_hh. Backward-weights is one GEMM over all steps
// (dW_hh: k = n T) and the bias gradients (8 FLOPs per unit and step).
PassKernels lstm_recurrent_kernels(double n, double h, double t, TrainingPass pass,
                                   Precision precision) {
  const double e = bytes_per_element(precision);
  PassKernels out;
  switch (pass) {
    case TrainingPass::forward:
      for (int step = 0; step < static_cast<int>(t); ++step) {
        out.work.push_back(recurrent_gemm_work(n, h, precision));
        out.work.push_back({KernelClass::elementwise, 17 * n * h, 7 * n * h * e});
      }
      break;
    case TrainingPass::backward_data:
      for (int step = 0; step < static_cast<int>(t); ++step) {
        out.work.push_back({KernelClass::elementwise, 17 * n * h, 9 * n * h * e});
        out.work.push_back(recurrent_gemm_work(n, h, precision));
      }
      break;
    case TrainingPass::backward_weights:
      out.work.push_back(gemm_kernel_work(4 * h, h, n * t, precision));
      out.work.push_back({KernelClass::elementwise, 8 * n * t * h, (4 * n * t + 8) * h * e});
      break;
  }
  return out;
}

std::vector<LayerPlan> plan_layers(const wl::Workload& workload, const wl::WorkloadCosts& costs) {
  if (costs.layers.size() != workload.layers.size()) {
    throw std::invalid_argument(fmt::format("costs of {} layers for a workload of {}",
                                            costs.layers.size(), workload.layers.size()));
  }
  std::vector<LayerPlan> plans;
  plans.reserve(workload.layers.size());
  for (size_t i = 0; i < workload.layers.size(); ++i) {
    plans.push_back(plan_layer(workload, costs, static_cast<int>(i)));
  }
  return plans;
}

PassKernels kernels_of(const LayerPlan& plan, TrainingPass pass, int batch, Precision precision) {
  const double n = batch;
  PassKernels out;
  switch (plan.mapping) {
    case LayerPlan::Mapping::none:
      return out;
    case LayerPlan::Mapping::elementwise: {
      const int p = static_cast<int>(pass);
      const KernelWork work{KernelClass::elementwise, n * plan.flops_per_sample[p],
                            n * plan.bytes_per_sample[p] + plan.bytes_per_batch[p]};
      // A pass that moves and computes nothing (a residual sum's backward hands its gradient
      // on) launches no kernel.
      if (work.flops > 0 || work.bytes > 0) out.work.push_back(work);
      return out;
    }
    case LayerPlan::Mapping::conv: {
      ConvShape shape = plan.conv;
      shape.batch = batch;
      out.work.push_back(conv_kernel_work(shape, pass, precision));
      break;
    }
    case LayerPlan::Mapping::fc:
      out.work.push_back(gemm_kernel_work(n, plan.fc_outputs, plan.fc_inputs, precision));
      break;
    case LayerPlan::Mapping::attention:
      add_attention_kernels(plan, pass, n, precision, out);
      break;
    case LayerPlan::Mapping::lstm:
      add_lstm_kernels(plan, pass, n, precision, out);
      break;
  }
  // Bias: forward adds it to every output (read and write the output, read the bias);
  // backward-weights sums the output gradient over everything but the channel (read it,
  // write the bias gradient). One addition per output element either way.
  if (plan.bias_outputs > 0) {
    const double outputs = n * plan.bias_outputs;
    const double element_bytes = bytes_per_element(precision);
    if (pass == TrainingPass::forward) {
      out.work.push_back({KernelClass::elementwise, outputs,
                          (2 * outputs + plan.bias_params) * element_bytes});
    } else if (pass == TrainingPass::backward_weights) {
      out.work.push_back({KernelClass::elementwise, outputs,
                          (outputs + plan.bias_params) * element_bytes});
    }
  }
  return out;
}

}  // namespace gpuscale::compute
