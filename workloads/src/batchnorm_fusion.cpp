#include "workloads/src/batchnorm_fusion.hpp"

#include <utility>

namespace gpuscale::wl {

const std::vector<std::string>& batchnorm_fusion_names() {
  static const std::vector<std::string> names{"batchnorm_relu", "batchnorm_add_relu"};
  return names;
}

void fuse_batchnorms(Workload& w, const BatchNormFusions& fusions) {
  const size_t n = w.layers.size();
  std::vector<int> readers(n, 0);
  for (const Layer& layer : w.layers) {
    for (int input : layer.inputs) ++readers[static_cast<size_t>(input)];
  }
  auto fusable = [&](int b) {
    const Layer& norm = w.layers[static_cast<size_t>(b)];
    return norm.type == LayerType::BatchNorm && readers[static_cast<size_t>(b)] == 1 &&
           norm.inputs.size() == 1 && !norm.params.fused_relu;
  };
  // [layer]: the batch norm that now computes its output (-1: the layer itself).
  std::vector<int> computed_by(n, -1);
  // [sum]: the batch norm fused with it, which takes its place: after the addend, which a
  // residual's projection computes after the body's last batch norm.
  std::vector<int> norm_in_place_of(n, -1);
  std::vector<bool> moved(n, false);
  for (size_t i = 1; i < n; ++i) {
    const Layer& relu = w.layers[i];
    if (relu.type != LayerType::Relu || relu.inputs.size() != 1) continue;
    const int a = relu.inputs[0];
    if (fusions.relu && fusable(a)) {
      w.layers[static_cast<size_t>(a)].params.fused_relu = true;
      computed_by[i] = a;
      continue;
    }
    const Layer& sum = w.layers[static_cast<size_t>(a)];
    if (!fusions.add_relu || sum.type != LayerType::Add || sum.params.scale != 1.0 ||
        sum.inputs.size() != 2 || readers[static_cast<size_t>(a)] != 1) {
      continue;
    }
    for (size_t k = 0; k < 2; ++k) {
      const int b = sum.inputs[k];
      if (!fusable(b)) continue;
      Layer& norm = w.layers[static_cast<size_t>(b)];
      norm.params.fused_relu = true;
      norm.inputs.push_back(sum.inputs[1 - k]);
      computed_by[i] = computed_by[static_cast<size_t>(a)] = b;
      norm_in_place_of[static_cast<size_t>(a)] = b;
      moved[static_cast<size_t>(b)] = true;
      break;
    }
  }
  std::vector<int> new_index(n, -1);
  std::vector<Layer> kept;
  auto keep = [&](size_t i) {
    new_index[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(w.layers[i]));
  };
  for (size_t i = 0; i < n; ++i) {
    if (norm_in_place_of[i] >= 0) {
      keep(static_cast<size_t>(norm_in_place_of[i]));
    } else if (!moved[i] && computed_by[i] < 0) {
      keep(i);
    }
  }
  auto resolve = [&](int old) {
    while (computed_by[static_cast<size_t>(old)] >= 0) old = computed_by[static_cast<size_t>(old)];
    return new_index[static_cast<size_t>(old)];
  };
  for (Layer& layer : kept) {
    for (int& input : layer.inputs) input = resolve(input);
    if (layer.shares >= 0) layer.shares = resolve(layer.shares);
  }
  w.layers = std::move(kept);
}

}  // namespace gpuscale::wl
