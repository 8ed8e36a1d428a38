// A precision recipe: what a framework runs when asked to train at a precision (`--precision`
// fp32, tf32, amp, fp16, bf16 or fp8), read from the framework's `precision:` section
// (docs/compute-model.md, "Precision recipes"). A recipe says which arithmetic each layer's
// GEMMs use, which layers it keeps in FP32, the dtype of the weights, of the gradients the
// exchange carries and of what the low-precision layers write, whether the optimizer keeps FP32
// master weights, how often weights are cast, what the optimizer step moves per parameter, and
// whether dynamic loss scaling reads its overflow flag back before the step. The compute model,
// the memory model, the replay and the exchange methods ask the recipe; none of them switches on
// its name.
#pragma once

#include <string>
#include <vector>

#include "topologies/core/config_tree.hpp"
#include "topologies/core/error.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::wl {

// The arithmetic of a layer's GEMMs (convolutions, fully connected layers, attention, LSTMs):
// FP32 on CUDA cores, or Tensor Core math on 16-bit (FP16, BF16), TF32 or FP8 inputs.
enum class Math { fp32, fp16, tf32, bf16, fp8 };
const char* to_string(Math math);

// How often a framework that keeps FP32 weights casts them for its 16-bit GEMMs.
enum class WeightCasts {
  none,  // the weights are already stored at the GEMMs' dtype (or the GEMMs run in FP32)
  // Once per forward, each weight a low-precision layer reads: autocast caches the cast of an
  // FP32 leaf until the autocast region ends, apex O1 until scale_loss exits; the cast's
  // backward turns the 16-bit weight gradient back into FP32 (4 + 2 bytes per element each way).
  per_forward,
  // Once per iteration, each 16-bit weight an FP8 layer reads, cast to FP8 with its transpose
  // (2 bytes read, 1 + 1 written per element) and kept across micro-batches: Transformer
  // Engine's weight workspace, updated on the first micro-batch only
  // (TransformerEngine@v1.8 module/linear.py:986-1006). Weight gradients come out of the
  // wgrad GEMM at 16 bits or wider: no cast back.
  per_iteration
};

// Which GEMM layers run at a recipe's gemm_math; the others it lowers run at its 16-bit
// `outside_math`.
enum class GemmScope {
  all,  // every layer the recipe lowers
  // The fully connected and 1x1 layers of the workload's transformer layers (each repeated block
  // around an attention layer, transformer_layers.hpp): Transformer Engine's fp8_autocast wraps
  // Megatron-Core's TransformerBlock only, so the embeddings and the output layer (a plain
  // ColumnParallelLinear) run at 16 bits; the attention core stays 16-bit too (fp8_dpa off by
  // default), while its projections (te.LayerNormLinear, te.Linear) run in FP8.
  transformer_linears
};

struct PrecisionRecipe {
  std::string name;         // one of precision_recipe_names()
  std::string runs_as;      // what the framework runs: "torch.cuda.amp autocast + GradScaler"
  std::string unavailable;  // non-empty: the framework lacks the recipe, and why
  Origin origin;            // its entry in the framework file

  Math gemm_math = Math::fp32;
  std::vector<LayerType> fp32_layers;  // run and written in FP32 whatever the recipe
  int activation_bytes = 4;            // per element that a low-precision layer writes
  int weight_bytes = 4;                // per parameter as the model stores it
  int gradient_bytes = 4;              // per gradient element, as the exchange carries it
  bool master_weights = false;    // the optimizer updates an FP32 copy of 16-bit weights
  bool master_gradients = false;  // and fills FP32 gradients for it each iteration (apex O2)
  WeightCasts weight_casts = WeightCasts::none;
  GemmScope gemm_scope = GemmScope::all;
  Math outside_math = Math::fp16;  // GEMMs outside gemm_scope that the recipe lowers
  // Each FP8 GEMM casts its input to FP8 with its transpose in forward and its output gradient
  // in backward (2 bytes read, 1 + 1 written per element; the cast kernels record amax
  // themselves: TransformerEngine@v1.8 module/linear.py:122-142, cpp_extensions/transpose.py).
  bool activation_casts = false;
  // The optimizer step per parameter: bytes moved (update, unscaling and master copies) and
  // kernels launched per parameter tensor.
  double update_bytes_per_param = 20;
  int update_kernels_per_tensor = 1;
  // Dynamic loss scaling reads its overflow flag back (`.item()`) before optimizer.step: the
  // issuing thread waits until backward and the exchange are done.
  bool overflow_sync = false;

  // Whether `type` runs at the recipe's low precision (a layer on the FP32 list does not; FP32
  // itself has no low precision).
  bool lowers(LayerType type) const;
  // The arithmetic of a layer of `type`'s GEMMs; `in_transformer_layer` says whether the layer
  // belongs to one of the workload's transformer layers (for GemmScope::transformer_linears).
  Math math_of(LayerType type, bool in_transformer_layer = false) const;
  // Bytes per element that a layer of `type` writes.
  int output_bytes_of(LayerType type) const;
  // Bytes the optimizer keeps per parameter: its state arrays (at the master dtype where there
  // are master weights) and the master weights themselves.
  double optimizer_bytes_per_param(int state_arrays) const;
};

// The elements of `layer`'s weight that `recipe` casts (0 for none): per forward, a
// low-precision layer's own FP32 weight (a tied weight is cast where it is owned); per
// iteration, an FP8 layer's weight. Either copy is 2 bytes per element (16 bits, or FP8 and its
// transpose).
double cast_weight_elements(const Layer& layer, const PrecisionRecipe& recipe,
                            bool in_transformer_layer = false);

// fp32, tf32, amp, fp16, bf16, fp8: the names --precision and `precision:` keys take.
const std::vector<std::string>& precision_recipe_names();
// Throws ConfigError at `at` for a name not in precision_recipe_names().
void check_precision_recipe_name(const std::string& name, const Origin& at);
// Sets the recipe `workload` trains with (named at `at`: a file's line or --precision), and the
// dtype of its activations with it (fp32 and tf32: 4 bytes, the others 2).
void set_precision(Workload& workload, const std::string& recipe, const Origin& at);

// The recipes of a framework file's `precision:` section; fp32 is added when absent (every
// framework trains in FP32 as its default).
std::vector<PrecisionRecipe> read_precision_recipes(const ConfigNode* section);

// The recipe `name` of `recipes`, read from `framework` (its name and file, for messages);
// throws ConfigError at `asked_at` when the framework lacks it (its reason, and the recipes it
// has).
const PrecisionRecipe& find_precision_recipe(const std::vector<PrecisionRecipe>& recipes,
                                             const std::string& name, const std::string& framework,
                                             const Origin& asked_at);

}  // namespace gpuscale::wl
