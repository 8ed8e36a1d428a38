#include "sim/parallel/transformer_shape.hpp"

#include <fmt/format.h>

#include "topologies/core/error.hpp"
#include "workloads/src/transformer_layers.hpp"

namespace gpuscale::par {

TransformerShape transformer_shape(const wl::Workload& workload, const wl::WorkloadCosts& costs) {
  TransformerShape shape;
  const wl::Layer* first = nullptr;
  for (const wl::Layer& layer : workload.layers) {
    if (layer.type == wl::LayerType::Embedding) {
      shape.vocab = std::max(shape.vocab, layer.params.vocab);
    }
    if (layer.type != wl::LayerType::Attention) continue;
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
  const wl::TransformerLayers blocks = wl::transformer_layers(workload);
  shape.layers = blocks.count;
  shape.hidden = first->output.channels;
  shape.heads = first->params.heads;
  shape.sequence = first->input.height * first->input.width;
  shape.fused_attention = first->params.fused;
  shape.block_params.assign(static_cast<size_t>(blocks.count), 0);
  shape.block_of = blocks.of;
  for (size_t i = 0; i < workload.layers.size(); ++i) {
    const long params = costs.layers[i].params;
    if (shape.block_of[i] < 0) {
      shape.pre_params += params;
    } else if (shape.block_of[i] == shape.layers) {
      shape.post_params += params;
      const int owner = workload.layers[i].shares;
      if (owner >= 0 && shape.block_of[static_cast<size_t>(owner)] < 0) {
        shape.tied_params += costs.layers[static_cast<size_t>(owner)].params;
      }
    } else {
      shape.block_params[static_cast<size_t>(shape.block_of[i])] += params;
    }
  }
  return shape;
}

}  // namespace gpuscale::par
