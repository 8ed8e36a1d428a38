#include "workloads/src/layer_costs.hpp"

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
    case LayerType::BatchNorm: return {7, 9, 3};
    case LayerType::Softmax: return {5, 1, 0};
    case LayerType::Lrn: {
      const double n = layer.params.lrn_size;
      return {2 * n + 3, 3 * n + 4, 0};
    }
    case LayerType::Add: return {layer.params.scale == 1.0 ? 1.0 : 2.0, 0, 0};
    default: return {0, 0, 0};
  }
}

void add_tensor(WorkloadCosts& costs, const Layer& layer, int index, const char* suffix,
                long elements) {
  costs.tensors.push_back({layer.name + "." + suffix, index, elements});
  costs.layers[static_cast<size_t>(index)].params += elements;
}

// Parameter tensors in MXNet's order: weight, then bias; batchnorm gamma, then beta.
void add_tensors(WorkloadCosts& costs, const Layer& layer, int index) {
  const LayerParams& p = layer.params;
  switch (layer.type) {
    case LayerType::Conv:
      add_tensor(costs, layer, index, "weight", static_cast<long>(weight_elements(layer)));
      if (p.bias) add_tensor(costs, layer, index, "bias", p.filters);
      break;
    case LayerType::Fc:
      add_tensor(costs, layer, index, "weight", static_cast<long>(weight_elements(layer)));
      if (p.bias) add_tensor(costs, layer, index, "bias", p.filters);
      break;
    case LayerType::BatchNorm:
      add_tensor(costs, layer, index, "gamma", layer.output.channels);
      add_tensor(costs, layer, index, "beta", layer.output.channels);
      break;
    default:
      break;
  }
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

  for (size_t i = 0; i < w.layers.size(); ++i) {
    const Layer& layer = w.layers[i];
    LayerCost& c = costs.layers[i];
    add_tensors(costs, layer, static_cast<int>(i));
    double in_elements = 0;
    for (int input : layer.inputs) {
      in_elements += static_cast<double>(w.layers[static_cast<size_t>(input)].output.elements());
      params_upstream[i] = params_upstream[i] || params_upstream[static_cast<size_t>(input)] ||
                           costs.layers[static_cast<size_t>(input)].params > 0;
    }
    const double out_elements = static_cast<double>(layer.output.elements());
    c.has_backward_weights = c.params > 0;
    c.has_backward_data = params_upstream[i];
    c.param_bytes = static_cast<double>(c.params) * element_bytes;

    c.fwd_macs = macs_per_sample(layer);
    if (c.fwd_macs > 0) {
      const double bias = layer.params.bias ? out_elements : 0;
      c.fwd_flops = 2 * c.fwd_macs + bias;
      c.bwd_data_flops = 2 * c.fwd_macs;
      c.bwd_weight_flops = 2 * c.fwd_macs + bias;
    } else if (layer.type == LayerType::Pool) {
      c.fwd_flops = c.bwd_data_flops = out_elements * pool_window(layer);
    } else {
      const ElementwiseOps ops = elementwise_ops(layer);
      c.fwd_flops = ops.fwd * out_elements;
      c.bwd_data_flops = ops.bwd_data * out_elements;
      c.bwd_weight_flops = ops.bwd_weight * out_elements;
    }
    if (!c.has_backward_data) c.bwd_data_flops = 0;
    if (!c.has_backward_weights) c.bwd_weight_flops = 0;

    if (layer.type != LayerType::Input) {
      c.fwd_activation_bytes = (in_elements + out_elements) * element_bytes;
      // The output gradient is read; the input gradient written; layers with parameters read
      // their input again for the weight gradient.
      double bwd = 0;
      if (c.has_backward_data || c.has_backward_weights) bwd += out_elements;
      if (c.has_backward_data) bwd += in_elements;
      if (c.has_backward_weights) bwd += in_elements;
      c.bwd_activation_bytes = bwd * element_bytes;
    }
    // The output, and a dropout's mask beside it. Whether a ReLU works in place (keeping nothing
    // of its own) is the framework's: the memory model asks FrameworkConfig::relu_in_place.
    c.activation_bytes = (layer.type == LayerType::Dropout ? 2 : 1) * out_elements * element_bytes;

    costs.params += c.params;
    costs.fwd_macs += c.fwd_macs;
    costs.fwd_flops += c.fwd_flops;
    costs.bwd_flops += c.bwd_data_flops + c.bwd_weight_flops;
  }
  return costs;
}

}  // namespace gpuscale::wl
