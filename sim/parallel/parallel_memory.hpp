// Memory per GPU of a pipeline stage under tensor, pipeline and data parallelism (Megatron-LM,
// mixed precision with Adam):
//   weights + gradients + optimizer = 2Ψ + 2Ψ + KΨ, K = 12 (fp16 weights, fp16 gradients; fp32
//     master weights, momentum and variance), Ψ = the stage's parameters / t
//     (Rajbhandari et al., "ZeRO", SC 2020, sec. 3.1); ZeRO-1 (their P_os) keeps KΨ/d per GPU.
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

// Activation bytes of one transformer layer and one micro-batch on one GPU (Table 2 above).
double layer_activation_bytes(const TransformerShape& shape, const ParallelLayout& layout);

// One entry per stage, stage 0 first.
std::vector<StageMemory> stage_memory(const TransformerShape& shape, const ParallelLayout& layout);

}  // namespace gpuscale::par
