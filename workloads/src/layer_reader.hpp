// The layer types of a workload file and their hyper-parameters (docs/workload-schema.md#layers).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topologies/core/config_tree.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::wl {

// The types of compute layers a file may name (`conv`, `relu`, ...): not the structural items
// (`concat`, `residual`, `block`), which the loader expands.
std::optional<LayerType> layer_type_from_string(const std::string& name);
std::vector<std::string> layer_type_names();

// Reads the hyper-parameters of one layer of `type` from `node` (a mapping, or null for a bare
// type name); `what` names the layer in errors. The keys that name other layers are returned
// for the loader to resolve: `name`; `from` (any layer: read that layer's output instead of the
// previous item's); `memory` (attention: the keys and values); `shares` (embedding, conv, fc:
// use that layer's weight).
struct LayerItem {
  LayerParams params;
  std::optional<std::string> name;
  std::optional<std::string> from;
  std::optional<std::string> memory;
  std::optional<std::string> shares;
};
LayerItem read_layer_item(LayerType type, const ConfigNode& node, const std::string& what);

// Throws ConfigError at the layer when its output or weights per sample exceed what one cuDNN
// tensor holds, so that no size computed from them overflows.
void check_tensor_sizes(const Layer& layer);

// The output shape of a compute layer on `input`; throws ConfigError at the layer's origin when
// the layer does not fit its input (a kernel larger than its padded input, channels that do not
// divide). Joins (Concat, Add) are shaped by the loader.
Shape infer_output_shape(const Layer& layer, const Shape& input);

}  // namespace gpuscale::wl
