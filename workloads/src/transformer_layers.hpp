// The transformer layers of a workload: each repeated block around an attention layer, found by
// name (`block: {repeat}` names layer k's members `layer.k.*`). Tensor and pipeline parallelism
// split a model at them (sim/parallel/transformer_shape.hpp), and Transformer Engine's FP8 runs
// inside them only (precision_recipe.hpp, GemmScope).
#pragma once

#include <vector>

#include "workloads/src/workload.hpp"

namespace gpuscale::wl {

struct TransformerLayers {
  int count = 0;  // L: one per attention layer
  // Per workload layer: the transformer layer it belongs to (0..L-1), -1 before the first
  // (embeddings), L after the last (final norm, output layer, loss); a layer between two blocks
  // stays with the one before.
  std::vector<int> of;
  bool contains(size_t layer) const { return of[layer] >= 0 && of[layer] < count; }
};

// Transformer layer k is every layer whose name starts with the path of the k-th attention
// layer's block (`layer.3.self_attention` -> `layer.3.`). A workload without attention layers
// has none (count 0, every layer -1).
TransformerLayers transformer_layers(const Workload& workload);

}  // namespace gpuscale::wl
