#include "workloads/src/transformer_layers.hpp"

#include <string>

namespace gpuscale::wl {

TransformerLayers transformer_layers(const Workload& workload) {
  std::vector<std::string> prefixes;
  for (const Layer& layer : workload.layers) {
    if (layer.type != LayerType::Attention) continue;
    const size_t dot = layer.name.rfind('.');
    prefixes.push_back(dot == std::string::npos ? layer.name : layer.name.substr(0, dot + 1));
  }
  TransformerLayers out;
  out.count = static_cast<int>(prefixes.size());
  out.of.assign(workload.layers.size(), -1);
  int block = -1;  // the block of the previous layer
  for (size_t i = 0; i < workload.layers.size(); ++i) {
    const std::string& name = workload.layers[i].name;
    for (int k = block + 1; k < out.count; ++k) {
      if (name.starts_with(prefixes[static_cast<size_t>(k)])) {
        block = k;
        break;
      }
    }
    const bool in_block = block >= 0 && name.starts_with(prefixes[static_cast<size_t>(block)]);
    out.of[i] = in_block ? block : (block == out.count - 1 ? out.count : block);
  }
  return out;
}

}  // namespace gpuscale::wl
