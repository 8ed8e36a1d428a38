#include "sim/parallel/transformer_shape.hpp"

#include <fmt/format.h>

#include "topologies/core/error.hpp"

namespace gpuscale::par {

TransformerShape transformer_shape(const wl::Workload& workload, const wl::WorkloadCosts& costs) {
  TransformerShape shape;
  std::vector<std::string> prefixes;
  const wl::Layer* first = nullptr;
  for (const wl::Layer& layer : workload.layers) {
    if (layer.type == wl::LayerType::Embedding) {
      shape.vocab = std::max(shape.vocab, layer.params.vocab);
    }
    if (layer.type != wl::LayerType::Attention) continue;
    const size_t dot = layer.name.rfind('.');
    prefixes.push_back(dot == std::string::npos ? layer.name : layer.name.substr(0, dot + 1));
    if (first == nullptr) {
      first = &layer;
      continue;
    }
    if (layer.output.channels != first->output.channels || layer.params.heads != first->params.heads ||
        layer.input.height * layer.input.width != first->input.height * first->input.width ||
        layer.params.fused != first->params.fused) {
      throw ConfigError(layer.origin,
                        fmt::format("{}: attention layer '{}' differs from '{}' in width, heads, "
                                    "sequence or fused: tensor and pipeline parallelism need "
                                    "identical transformer layers",
                                    workload.name, layer.name, first->name));
    }
  }
  if (first == nullptr) {
    throw ConfigError({workload.file}, fmt::format("{}: no attention layer: tensor and pipeline "
                                                   "parallelism are modelled for transformers only",
                                                   workload.name));
  }
  shape.layers = static_cast<int>(prefixes.size());
  shape.hidden = first->output.channels;
  shape.heads = first->params.heads;
  shape.sequence = first->input.height * first->input.width;
  shape.fused_attention = first->params.fused;
  shape.block_params.assign(prefixes.size(), 0);
  shape.block_of.assign(workload.layers.size(), -1);

  int block = -1;  // the block of the previous layer: layers between blocks stay with the one before
  std::vector<bool> before_blocks(workload.layers.size(), false);
  for (size_t i = 0; i < workload.layers.size(); ++i) {
    const std::string& name = workload.layers[i].name;
    for (int k = block + 1; k < shape.layers; ++k) {
      if (name.starts_with(prefixes[static_cast<size_t>(k)])) {
        block = k;
        break;
      }
    }
    const bool in_block = block >= 0 && name.starts_with(prefixes[static_cast<size_t>(block)]);
    shape.block_of[i] = in_block ? block : (block == shape.layers - 1 ? shape.layers : block);
    before_blocks[i] = block < 0;
    const long params = costs.layers[i].params;
    if (shape.block_of[i] < 0) {
      shape.pre_params += params;
    } else if (shape.block_of[i] == shape.layers) {
      shape.post_params += params;
      const int owner = workload.layers[i].shares;
      if (owner >= 0 && before_blocks[static_cast<size_t>(owner)]) {
        shape.tied_params += costs.layers[static_cast<size_t>(owner)].params;
      }
    } else {
      shape.block_params[static_cast<size_t>(shape.block_of[i])] += params;
    }
  }
  return shape;
}

}  // namespace gpuscale::par
