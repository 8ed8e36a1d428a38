// Memory per GPU of a pipeline stage under tensor, pipeline and data parallelism (Megatron-LM
// with Adam, at a precision recipe, workloads/frameworks/megatron-lm.yaml):
//   weights + gradients + optimizer per parameter, Ψ = the stage's parameters / t, as
//     Megatron-LM's own table gives them (NVIDIA/Megatron-LM@core_r0.8.0,
//     docs/source/distrib_optimizer.md lines 9-15): FP16 weights and gradients 2 + 2 + 16
//     (FP32 master weights, master gradients, momentum and variance); BF16 weights with FP32
//     gradients 2 + 4 + 12; FP32 4 + 4 + 8. The distributed optimizer (gpuscale's --zero1,
//     ZeRO-1: Rajbhandari et al., SC 2020) keeps the optimizer's part / d per GPU. FP8 adds
//     Transformer Engine's FP8 copy of each transformer-layer weight and its transpose, 2 bytes
//     per parameter kept across micro-batches (precision_recipe.hpp, WeightCasts).
//     The first stage holds the embeddings, the last the final norm and the output layer; an
//     output layer tied to the token embedding is a second copy on the last stage when p > 1
//     (Megatron-LM keeps both and allreduces their gradients: Narayanan et al. SC'21, sec. 5.1).
//   activations = micro-batches in flight x the stage's transformer layers x one layer's bytes,
//     one layer's bytes per Korthikanti et al., MLSys 2023, Table 2 (fp16, s b h in elements):
//       no recomputation, tensor parallel:           s b h (10 + 24/t + 5 a s / (h t))
//       no recomputation, + sequence parallel:       s b h (34/t + 5 a s / (h t))
//       selective recomputation, tensor parallel:    s b h (10 + 24/t)
//       selective recomputation, + sequence parallel: s b h 34/t
//       full recomputation (the layer input only):   2 s b h
//     With fused attention (FlashAttention-2, the workload's attention `fused: true`) the
//     5 a s / (h t) term, the softmax's and dropout's a x s x s tensors, becomes 4 a / (h t): the
//     logsumexp, a s b fp32 values per layer (Dao 2023, Algorithm 1); selective recomputation
//     drops either.
//     Under 1F1B stage k (0-based) has min(p - k, m) micro-batches in flight (its warm-up's p-k-1
//     forwards and the one whose backward comes next): the first stage holds p x L/p = L layers'
//     worth whatever p is, [kor23] sec. 4.2.3.
// Left out: the embeddings' and the loss's own activations ([kor23] sec. 4.3: under 1% for
// GPT-3), the CUDA context, the communication buffers, fragmentation.
#pragma once

#include <vector>

#include "sim/parallel/layout.hpp"
#include "workloads/src/precision_recipe.hpp"

namespace gpuscale::par {

struct StageMemory {
  double params_per_gpu = 0;  // Ψ
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  int micro_batches_in_flight = 0;
  double total() const { return weights + gradients + optimizer + activations; }
};

// The parameters of each stage (whole, before the split over t): its transformer layers, the
// embeddings on the first stage, the rest (and a tied output layer's copy when p > 1) on the last.
std::vector<long> stage_params(const TransformerShape& shape, int pp);

// Activation bytes of one transformer layer and one micro-batch on one GPU at 16 bits (Table 2
// above).
double layer_activation_bytes(const TransformerShape& shape, const ParallelLayout& layout);

// One entry per stage, stage 0 first.
std::vector<StageMemory> stage_memory(const TransformerShape& shape, const ParallelLayout& layout,
                                      const wl::PrecisionRecipe& recipe);

}  // namespace gpuscale::par
