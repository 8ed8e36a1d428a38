// What tensor and pipeline parallelism need to know of a decoder-only transformer workload: its
// transformer layers (the repeated block around each attention layer), hidden size h, heads a,
// sequence s and vocabulary V, and which of the workload's layers belong to which transformer
// layer, so that a pipeline stage can take whole transformer layers (Megatron-LM's split).
#pragma once

#include <string>
#include <vector>

#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::par {

struct TransformerShape {
  int layers = 0;    // L: transformer layers, one per attention layer
  long hidden = 0;   // h: the attention layers' width
  int heads = 0;     // a
  long sequence = 0; // s: tokens per sample (the attention input's height x width)
  long vocab = 0;    // V: rows of the largest embedding table (the token embedding)
  bool fused_attention = false;  // the attention layers' `fused` (one fused core kernel)
  // Per workload layer: the transformer layer it belongs to (0..L-1), -1 before the first
  // (embeddings), L after the last (final norm, output layer, loss).
  std::vector<int> block_of;
  std::vector<long> block_params;  // parameters of each transformer layer
  long pre_params = 0;             // the embeddings
  long post_params = 0;            // after the last transformer layer, tied weights not counted
  long tied_params = 0;  // parameters a layer after the last block shares with one before it
};

// The transformer layers are wl::transformer_layers'. Throws ConfigError (at the workload file) for a workload without attention layers or
// whose attention layers differ in width, heads, sequence or fusion.
TransformerShape transformer_shape(const wl::Workload& workload, const wl::WorkloadCosts& costs);

}  // namespace gpuscale::par
