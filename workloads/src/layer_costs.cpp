#include "workloads/src/layer_costs.hpp"

#include <fmt/format.h>

#include <optional>

namespace gpuscale::wl {
namespace {

// Element-wise FLOPs per output element: {forward, backward-data, backward-weights}
// (docs/workload-schema.md#costs).
struct ElementwiseOps {
  double fwd, bwd_data, bwd_weight;
};

ElementwiseOps elementwise_ops(const Layer& layer) {
  switch (layer.type) {
    case LayerType::Relu: return {1, 1, 0};
    case LayerType::Tanh: return {1, 2, 0};
    case LayerType::Dropout: return {1, 1, 0};
    case LayerType::BatchNorm:
      // A fused ReLU (and residual sum) adds the ops of the layers it replaces (batchnorm_fusion).
      if (layer.params.fused_relu) {
        const double sum = layer.inputs.size() > 1 ? 1 : 0;
        return {7 + 1 + sum, 9 + 1, 3};
      }
      return {7, 9, 3};
    case LayerType::LayerNorm: return {7, 9, 3};
    case LayerType::Softmax: return {5, 1, 0};
    // SwiGLU, a SiLU(a) b per output element: the sigmoid (3), a times it, times b; backward
    // dA = dY b (s + a s (1 - s)) (6) and dB = dY SiLU(a) (1) [?].
    case LayerType::Glu: return {5, 7, 0};
    case LayerType::Lrn: {
      const double n = layer.params.lrn_size;
      return {2 * n + 3, 3 * n + 4, 0};
    }
    case LayerType::Add: return {layer.params.scale == 1.0 ? 1.0 : 2.0, 0, 0};
    // 2 x 2 sampling points per output element (sampling_ratio 2, as maskrcnn-benchmark's
    // configs set), each a bilinear blend of 4 taps: a multiply-add per tap, forward and
    // backward (the gradient is scattered to the same taps).
    case LayerType::RoiAlign: return {32, 32, 0};
    default: return {0, 0, 0};
  }
}

// Layers whose backward reads a tensor forward kept, besides the output gradient: dX = dY f'(Y)
// (PyTorch's derivatives.yaml: relu's threshold_backward(grad, result), tanh_backward(grad,
// result), _softmax_backward_data(grad, output), dropout's grad * mask).
bool reads_kept_tensor_backward(LayerType type) {
  return type == LayerType::Relu || type == LayerType::Tanh || type == LayerType::Softmax ||
         type == LayerType::Dropout;
}

void add_tensor(WorkloadCosts& costs, const Layer& layer, int index, const std::string& suffix,
                long elements) {
  costs.tensors.push_back({layer.name + "." + suffix, index, elements});
  costs.layers[static_cast<size_t>(index)].params += elements;
}

// Parameter tensors in MXNet's order: weight, then bias; batchnorm gamma, then beta. A layer
// that shares another's weight adds no weight tensor: its gradient adds into the owner's.
void add_tensors(WorkloadCosts& costs, const Layer& layer, int index) {
  const LayerParams& p = layer.params;
  switch (layer.type) {
    case LayerType::Conv:
    case LayerType::Fc:
    case LayerType::Embedding:
      if (layer.shares >= 0) break;  // its weight and bias are the owner's (share_weight)
      add_tensor(costs, layer, index, "weight", static_cast<long>(weight_elements(layer)));
      if (p.bias && layer.type != LayerType::Embedding) {
        add_tensor(costs, layer, index, "bias", p.filters);
      }
      break;
    case LayerType::Attention: {
      const long d = layer.output.channels;
      if (p.additive) {  // GNMT's BahdanauAttention(normalize=True), PyTorch's names
        add_tensor(costs, layer, index, "linear_q.weight", d * d);
        add_tensor(costs, layer, index, "linear_k.weight", d * d);
        add_tensor(costs, layer, index, "linear_att", d);
        add_tensor(costs, layer, index, "normalize_scalar", 1);
        add_tensor(costs, layer, index, "normalize_bias", d);
        break;
      }
      // The query, key, value and output projections, each d x d (TensorFlow's q, k, v and
      // output_transform; PyTorch packs the first three in in_proj_weight); with grouped-query
      // attention the key and value projections are d x kv_width.
      const long kv = static_cast<long>(attention_kv_width(layer));
      for (const char* projection : {"q", "k", "v", "out"}) {
        const bool key_or_value = *projection == 'k' || *projection == 'v';
        const long width = key_or_value ? kv : d;
        add_tensor(costs, layer, index, fmt::format("{}.weight", projection), d * width);
        if (p.bias) add_tensor(costs, layer, index, fmt::format("{}.bias", projection), width);
      }
      break;
    }
    case LayerType::Lstm: {
      // PyTorch nn.LSTM: two biases per gate set, as cuDNN keeps them.
      const long h = p.filters, x = layer.input.channels;
      for (const char* direction : {"", "_reverse"}) {
        if (*direction != '\0' && !p.bidirectional) break;
        add_tensor(costs, layer, index, fmt::format("weight_ih_l0{}", direction), 4 * h * x);
        add_tensor(costs, layer, index, fmt::format("weight_hh_l0{}", direction), 4 * h * h);
        add_tensor(costs, layer, index, fmt::format("bias_ih_l0{}", direction), 4 * h);
        add_tensor(costs, layer, index, fmt::format("bias_hh_l0{}", direction), 4 * h);
      }
      break;
    }
    case LayerType::LayerNorm:
    case LayerType::BatchNorm:
      add_tensor(costs, layer, index, "gamma", layer.output.channels);
      add_tensor(costs, layer, index, "beta", layer.output.channels);
      break;
    default:
      break;
  }
}

// The costs of attention and LSTM layers per sample, in elements where not FLOPs: what they
// move besides their inputs and output (`inner_*`: intermediates written and read back, as a
// plain implementation runs them [?], or a fused attention core) and keep for backward besides
// their output (docs/workload-schema.md#costs).
struct SequenceCost {
  double macs = 0, fwd = 0, bwd_data = 0, bwd_weight = 0;
  double inner_fwd = 0, inner_bwd = 0, kept = 0;
};

// Multi-head attention of Tq queries over Tk keys and values of d features in h heads
// (Vaswani et al. 2017, sec. 3.2): the four projections, (2 Tq + 2 Tk) d^2 multiply-adds; the
// scores Q K^T and the weighted sum P V, Tq Tk d each, whatever h; softmax 5 operations per
// probability forward, 3 backward (P (dP - rowsum(dP P))); the core's backward is four
// products of the forward's size (dP, dV, dQ, dK); a bias adds one operation per projected
// element each way.
// Additive attention (Bahdanau et al. 2015; GNMT's normalised variant): score(q, k) =
// v . tanh(Wq q + Wk k + b), so the Q and K projections, (Tq + Tk) d^2, then per pair a
// d-vector sum, tanh and dot (3 operations and a multiply-add per element of the Tq Tk d
// tensor), softmax, and the context P K (Tq Tk d). Backward: 6 operations per element of that
// tensor for the data pass (the tanh derivative and the sums into dq and dk), 3 for the
// weights (dv and db).
SequenceCost attention_cost(const Workload& w, const Layer& layer) {
  const Shape& kv = w.layers[static_cast<size_t>(layer.inputs.back())].output;
  const double tq = static_cast<double>(layer.input.height * layer.input.width);
  const double tk = static_cast<double>(kv.height * kv.width);
  const double d = static_cast<double>(layer.input.channels);
  const double pairs = tq * tk;
  SequenceCost s;
  if (layer.params.additive) {
    const double projections = (tq + tk) * d * d;
    s.macs = projections + 2 * pairs * d;
    s.fwd = 2 * s.macs + 3 * pairs * d + 5 * pairs;
    s.bwd_data = 2 * projections + 4 * pairs * d + 6 * pairs * d + 3 * pairs;
    s.bwd_weight = 2 * projections + 3 * pairs * d;
    s.inner_fwd = 2 * (tq + tk) * d + 2 * pairs * d + 4 * pairs;
    s.inner_bwd = 2 * s.inner_fwd;
    s.kept = (tq + tk) * d + pairs * d + pairs;
    return s;
  }
  // The projected elements: Q and the output (Tq d), K and V (Tk kv_width).
  const double projected = 2 * tq * d + 2 * tk * attention_kv_width(layer);
  const double probabilities = layer.params.heads * pairs;
  const double projections = projected * d;
  const double core = 2 * pairs * d;
  const double bias = layer.params.bias ? projected : 0;
  s.macs = projections + core;
  s.fwd = 2 * s.macs + 5 * probabilities + bias;
  s.bwd_data = 2 * projections + 4 * core + 3 * probabilities;
  s.bwd_weight = 2 * projections + bias;
  if (layer.params.fused) {
    // A fused core (FlashAttention-2, Dao 2023, Algorithms 1 and 2) writes no score or
    // probability: Q, K, V written and read back, the context written and read, and the
    // softmax's logsumexp, h Tq values in fp32 (here in elements of the model's precision),
    // written forward and read backward; backward reads Q, K, V, the context and its gradient
    // and writes dQ, dK, dV. The FLOPs above stay the operations of the mathematics (what model
    // FLOPs count); the fused kernel's backward also recomputes the scores
    // (layer_kernels.cpp).
    const double logsumexp = layer.params.heads * tq * 4.0 / bytes_per_element(w.precision);
    s.inner_fwd = 2 * projected + logsumexp;
    s.inner_bwd = 4 * projected + logsumexp;
    s.kept = projected + logsumexp;
    return s;
  }
  // Q, K, V and the context written and read back; the scores and probabilities twice.
  s.inner_fwd = 2 * projected + 4 * probabilities;
  s.inner_bwd = 2 * s.inner_fwd;
  s.kept = projected + probabilities;
  return s;
}

// An LSTM of h units over T steps of x features, per direction: the gates' GEMMs 4h (x + h)
// multiply-adds per step; 17 operations per unit and step for the two bias adds (8), the gate
// nonlinearities (4), c = f c + i g (3) and h = o tanh(c) (2), as many backward [?].
// Backward-data: dx and dh, 4h (x + h) multiply-adds per step; backward-weights: dW_ih, dW_hh
// as many, and the two bias gradients (8 per unit and step). Kept for backward: the gates and
// the cell state (cuDNN's reserve space), 5h per step.
SequenceCost lstm_cost(const Layer& layer) {
  const double t = static_cast<double>(layer.input.height * layer.input.width);
  const double x = static_cast<double>(layer.input.channels);
  const double h = static_cast<double>(layer.params.filters);
  const double steps = t * (layer.params.bidirectional ? 2 : 1);  // of one direction each
  SequenceCost s;
  s.macs = steps * 4 * h * (x + h);
  s.fwd = 2 * s.macs + 17 * h * steps;
  s.bwd_data = 2 * s.macs + 17 * h * steps;
  s.bwd_weight = 2 * s.macs + 8 * h * steps;
  s.inner_fwd = 10 * h * steps;  // gates written and read, c written, h_prev read
  s.inner_bwd = 2 * s.inner_fwd;
  s.kept = 5 * h * steps;
  return s;
}

std::optional<SequenceCost> sequence_cost(const Workload& w, const Layer& layer) {
  if (layer.type == LayerType::Attention) return attention_cost(w, layer);
  if (layer.type == LayerType::Lstm) return lstm_cost(layer);
  return std::nullopt;
}

double macs_per_sample(const Layer& layer) {
  const LayerParams& p = layer.params;
  if (layer.type == LayerType::Conv) {
    return static_cast<double>(layer.output.elements()) * p.kernel_h * p.kernel_w *
           (layer.input.channels / p.groups);
  }
  if (layer.type == LayerType::Fc) {
    return static_cast<double>(layer.input.elements()) * p.filters;
  }
  return 0;
}

// Window elements visited per pooled output.
double pool_window(const Layer& layer) {
  if (layer.params.global_pool) return static_cast<double>(layer.input.height) * layer.input.width;
  return static_cast<double>(layer.params.kernel_h) * layer.params.kernel_w;
}

}  // namespace

WorkloadCosts compute_costs(const Workload& w) {
  WorkloadCosts costs;
  costs.layers.resize(w.layers.size());
  const double element_bytes = bytes_per_element(w.precision);
  std::vector<bool> params_upstream(w.layers.size(), false);  // some ancestor has parameters
  std::vector<int> consumers(w.layers.size(), 0);             // layers that read each output
  for (const Layer& layer : w.layers) {
    for (int input : layer.inputs) ++consumers[static_cast<size_t>(input)];
  }

  for (size_t i = 0; i < w.layers.size(); ++i) {
    const Layer& layer = w.layers[i];
    LayerCost& c = costs.layers[i];
    add_tensors(costs, layer, static_cast<int>(i));
    double in_elements = 0;
    for (int input : layer.inputs) {
      in_elements += static_cast<double>(w.layers[static_cast<size_t>(input)].output.elements());
      // A layer with tied weights has parameters too, though another layer counts them.
      params_upstream[i] = params_upstream[i] || params_upstream[static_cast<size_t>(input)] ||
                           costs.layers[static_cast<size_t>(input)].has_backward_weights;
    }
    const double out_elements = static_cast<double>(layer.output.elements());
    c.has_backward_weights = c.params > 0 || layer.shares >= 0;
    // An embedding's input is integer ids: nothing upstream needs a gradient through it.
    c.has_backward_data = params_upstream[i] && layer.type != LayerType::Embedding;
    c.param_bytes = static_cast<double>(c.params) * element_bytes;
    c.param_read_bytes = layer.type == LayerType::Embedding ? 0 : c.param_bytes;

    const std::optional<SequenceCost> sequence = sequence_cost(w, layer);
    c.fwd_macs = sequence ? sequence->macs : macs_per_sample(layer);
    if (sequence) {
      c.fwd_flops = sequence->fwd;
      c.bwd_data_flops = sequence->bwd_data;
      c.bwd_weight_flops = sequence->bwd_weight;
    } else if (c.fwd_macs > 0) {
      const double bias = layer.params.bias ? out_elements : 0;
      c.fwd_flops = 2 * c.fwd_macs + bias;
      c.bwd_data_flops = 2 * c.fwd_macs;
      c.bwd_weight_flops = 2 * c.fwd_macs + bias;
    } else if (layer.type == LayerType::Pool) {
      c.fwd_flops = c.bwd_data_flops = out_elements * pool_window(layer);
    } else if (layer.type == LayerType::Embedding) {
      // Forward gathers rows (no arithmetic); backward-weights scatter-adds each output
      // gradient element into its row: one addition per output element.
      c.bwd_weight_flops = out_elements;
    } else {
      const ElementwiseOps ops = elementwise_ops(layer);
      c.fwd_flops = ops.fwd * out_elements;
      c.bwd_data_flops = ops.bwd_data * out_elements;
      c.bwd_weight_flops = ops.bwd_weight * out_elements;
    }
    if (!c.has_backward_data) c.bwd_data_flops = 0;
    if (!c.has_backward_weights) c.bwd_weight_flops = 0;

    if (layer.type == LayerType::Embedding) {
      // Forward reads the ids and the rows they name and writes the output. Backward-weights
      // (PyTorch's dense gradient, nn.Embedding's default sparse=False) zeroes the whole
      // gradient table (param_bytes, per batch) and, per sample, reads the ids and the output
      // gradient and read-modify-writes the rows they name.
      c.fwd_activation_bytes = (in_elements + 2 * out_elements) * element_bytes;
      c.bwd_activation_bytes = (in_elements + 3 * out_elements) * element_bytes;
    } else if (sequence) {
      c.fwd_activation_bytes = (in_elements + out_elements + sequence->inner_fwd) * element_bytes;
      c.bwd_activation_bytes =
          (2 * in_elements + out_elements + sequence->inner_bwd) * element_bytes;
    } else if (layer.type != LayerType::Input) {
      c.fwd_activation_bytes = (in_elements + out_elements) * element_bytes;
      // The output gradient is read; the input gradient written; layers with parameters read
      // their input again for the weight gradient.
      double bwd = 0;
      if (c.has_backward_data || c.has_backward_weights) bwd += out_elements;
      if (c.has_backward_data) bwd += in_elements;
      // The weight gradient reads the layer's input, x: a fused batch norm's addend only adds
      // to its output.
      const double x = static_cast<double>(layer.input.elements());
      if (c.has_backward_weights) bwd += layer.type == LayerType::BatchNorm ? x : in_elements;
      // An element-wise layer's input gradient is dY f'(.) of what forward kept: ReLU's and
      // tanh's output, softmax's output, dropout's mask, read beside dY.
      if (c.has_backward_data && reads_kept_tensor_backward(layer.type)) bwd += out_elements;
      if (layer.type == LayerType::BatchNorm) {
        // Batch norm reduces over the batch and the map, far more than any cache holds, before
        // it can use the result: forward reads its input for the statistics, then again to
        // normalise it; backward reduces dY and dY (X - mean), then reads both again to write
        // dX (PyTorch's batch_norm_collect_statistics_kernel and _transform_input_kernel;
        // batch_norm_backward_kernel, aten/src/ATen/native/cuda/Normalization.cuh).
        c.fwd_activation_bytes += x * element_bytes;
        if (c.has_backward_data) bwd += x + out_elements;
        // Fused with the ReLU after it (cudnnBatchNormalizationForwardTrainingEx, BN_ACTIVATION):
        // forward writes ReLU(BN(x)) where a plain norm writes BN(x), and reads the addend z beside
        // x with BN_ADD_ACTIVATION (counted with the inputs above); backward (BackwardEx, whose
        // arguments include y) reads y beside dY in each pass over dY to mask it, and writes dz,
        // the addend's gradient, beside dX (counted with the inputs above).
        if (layer.params.fused_relu) bwd += (c.has_backward_data ? 2 : 1) * out_elements;
      }
      // A residual sum passes its output gradient on to both inputs unchanged: no kernel
      // (PyTorch's AddBackward returns it twice). The two gradients meet where the branches
      // fork, below. [?] MXNet 1.1's _backward_add may write its outputs in place of its input
      // (FInplaceOption {0,0},{0,1}, elemwise_binary_op_basic.cc:49-57 at 1.1.0); where its
      // planner cannot put both there, a copy runs that is not counted.
      if (layer.type == LayerType::Add) bwd = 0;
      c.bwd_activation_bytes = bwd * element_bytes;
    }
    // Where k layers read this output, their k gradients are summed before its own backward:
    // k - 1 sums of two, each reading two tensors and writing one (PyTorch's autograd
    // InputBuffer::accumulate; MXNet 1.1's chain of _grad_add below
    // MXNET_EXEC_INPLACE_GRAD_SUM_CAP, 8 by default, graph_executor.cc:153-155).
    const int forks = consumers[i] - 1;
    if (forks > 0 && (c.has_backward_data || c.has_backward_weights)) {
      c.bwd_activation_bytes += 3.0 * forks * out_elements * element_bytes;
      (c.has_backward_data ? c.bwd_data_flops : c.bwd_weight_flops) += forks * out_elements;
    }
    // The output, and a dropout's mask beside it. Whether a ReLU works in place (keeping nothing
    // of its own) is the framework's: the memory model asks FrameworkConfig::relu_in_place.
    c.activation_bytes = (layer.type == LayerType::Dropout ? 2 : 1) * out_elements * element_bytes;
    if (sequence) c.activation_bytes += sequence->kept * element_bytes;

    costs.params += c.params;
    costs.fwd_macs += c.fwd_macs;
    costs.fwd_flops += c.fwd_flops;
    costs.bwd_flops += c.bwd_data_flops + c.bwd_weight_flops;
  }
  return costs;
}

}  // namespace gpuscale::wl
