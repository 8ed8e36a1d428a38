// A Megatron-LM layout of GPUs: tensor parallelism t inside a node, pipeline parallelism p over
// whole transformer layers, data parallelism d over the rest (t p d = GPUs), micro-batch b and
// global batch B, so m = B / (b d) micro-batches per pipeline and iteration. What makes a layout
// valid, and the closed forms it is judged by.
//
// Sources:
//  [nar21] Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
//          Megatron-LM", SC 2021: sec. 2.2.1 (the 1F1B bubble, (p-1)/m of the ideal time, i.e.
//          (p-1)/(m+p-1) of the pipeline's time), sec. 3.2 (t at most the GPUs of a node), eq. 3
//          (FLOPs per iteration with activation recomputation).
//  [kor23] Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
//          MLSys 2023: sec. 4 (sequence parallelism, selective and full recomputation).
#pragma once

#include <string>
#include <vector>

#include "sim/parallel/transformer_shape.hpp"

namespace gpuscale::par {

// none: every activation kept; selective: attention's s^2 part recomputed ([kor23] sec. 5);
// full: only each transformer layer's input kept, the layer's forward rerun in backward.
enum class Recompute { None, Selective, Full };
const char* to_string(Recompute r);
std::vector<std::string> recompute_names();  // "none", "selective", "full"
// Throws ConfigError "--recompute: unknown mode 'x' (known: none, selective, full)".
Recompute recompute_by_name(const std::string& name);

struct ParallelLayout {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int micro_batch = 1;    // b, samples (sequences)
  int global_batch = 1;   // B, samples per iteration over the whole job
  bool zero1 = false;     // the optimizer state sharded over the d replicas (ZeRO stage 1)
  bool sequence_parallel = false;  // [kor23] sec. 4.2.2: layer norms and dropouts split over t
  Recompute recompute = Recompute::None;

  int gpus() const { return tp * pp * dp; }
  int micro_batches() const { return global_batch / (micro_batch * dp); }  // m
  std::string str() const;  // "TP 8 PP 16 DP 8 b 1 B 1536"
};

// Throws ConfigError, one line naming the option, when the layout is not valid for the model on
// a machine of `gpus_per_node` GPUs per node: t, p, d, b, B below 1; t not dividing the heads or
// above a node's GPUs; p not dividing the transformer layers; B not divisible by b d.
void check_layout(const ParallelLayout& layout, const TransformerShape& shape, int gpus_per_node);

// The 1F1B bubble as a share of the pipeline's time: (p-1)/(m+p-1) [nar21] sec. 2.2.1.
double bubble_fraction(int pp, int micro_batches);

// Model FLOPs of one iteration without recomputation: [nar21] eq. 3's count with backward at
// twice forward instead of three times (their 96 counts the recomputed forward):
// 72 B s L h^2 (1 + s/(6h)) + 6 B s h V = 6 N tokens (N ~ 12 L h^2) + attention + logits.
double model_flops_per_iteration(const TransformerShape& shape, int global_batch);
// [nar21] eq. 3 itself, 96 B s L h^2 (1 + s/(6h) + V/(16 L h)): what they report per GPU.
double narayanan_flops_per_iteration(const TransformerShape& shape, int global_batch);

// Every valid layout of `gpus` GPUs (t from `tps` and p from `pps`, each empty for all values),
// d = gpus / (t p), with b, B and the options of `base`; ordered by t, then p.
std::vector<ParallelLayout> valid_layouts(const ParallelLayout& base, int gpus,
                                          const std::vector<int>& tps, const std::vector<int>& pps,
                                          const TransformerShape& shape, int gpus_per_node);

}  // namespace gpuscale::par
