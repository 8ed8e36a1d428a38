#include "sim/parallel/parallel_memory.hpp"

#include <algorithm>

namespace gpuscale::par {

std::vector<long> stage_params(const TransformerShape& shape, int pp) {
  std::vector<long> params(static_cast<size_t>(pp), 0);
  const int per_stage = shape.layers / pp;
  for (int k = 0; k < shape.layers; ++k) {
    params[static_cast<size_t>(k / per_stage)] += shape.block_params[static_cast<size_t>(k)];
  }
  params.front() += shape.pre_params;
  params.back() += shape.post_params + (pp > 1 ? shape.tied_params : 0);
  return params;
}

double layer_activation_bytes(const TransformerShape& shape, const ParallelLayout& layout) {
  const double s = static_cast<double>(shape.sequence), b = layout.micro_batch,
               h = static_cast<double>(shape.hidden), a = shape.heads, t = layout.tp;
  const double sbh = s * b * h;
  // Unfused: the softmax's output (2 a s^2 b), its dropout mask (a s^2 b) and the dropout's
  // output (2 a s^2 b). Fused (FlashAttention-2) keeps none of them, only the softmax's
  // logsumexp, a s b values in fp32 (Dao 2023, Algorithm 1); Q, K, V and the context
  // are the 10 + 24/t term's already.
  const double attention =
      shape.fused_attention ? 4 * a / (h * t) : 5 * a * s / (h * t);
  const double linear = layout.sequence_parallel ? 34 / t : 10 + 24 / t;
  switch (layout.recompute) {
    case Recompute::None: return sbh * (linear + attention);
    case Recompute::Selective: return sbh * linear;
    case Recompute::Full: return 2 * sbh;
  }
  return 0;
}

std::vector<StageMemory> stage_memory(const TransformerShape& shape, const ParallelLayout& layout,
                                      const wl::PrecisionRecipe& recipe) {
  constexpr int kAdamStateArrays = 2;  // momentum and variance
  const double optimizer_bytes = recipe.optimizer_bytes_per_param(kAdamStateArrays) +
                                 (recipe.master_gradients ? 4 : 0);
  const double cast_bytes = recipe.weight_casts == wl::WeightCasts::per_iteration ? 2 : 0;
  const std::vector<long> params = stage_params(shape, layout.pp);
  const double per_layer =
      layer_activation_bytes(shape, layout) * recipe.activation_bytes / 2.0;
  const int layers_per_stage = shape.layers / layout.pp;
  std::vector<StageMemory> stages;
  for (int k = 0; k < layout.pp; ++k) {
    StageMemory m;
    m.params_per_gpu = static_cast<double>(params[static_cast<size_t>(k)]) / layout.tp;
    double block_params = 0;
    for (int b = k * layers_per_stage; b < (k + 1) * layers_per_stage; ++b) {
      block_params += static_cast<double>(shape.block_params[static_cast<size_t>(b)]);
    }
    m.weights = recipe.weight_bytes * m.params_per_gpu + cast_bytes * block_params / layout.tp;
    m.gradients = recipe.gradient_bytes * m.params_per_gpu;
    m.optimizer = optimizer_bytes * m.params_per_gpu / (layout.zero1 ? layout.dp : 1);
    m.micro_batches_in_flight = std::min(layout.pp - k, layout.micro_batches());
    m.activations = per_layer * layers_per_stage * m.micro_batches_in_flight;
    stages.push_back(m);
  }
  return stages;
}

}  // namespace gpuscale::par
