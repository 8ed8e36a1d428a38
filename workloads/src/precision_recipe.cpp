#include "workloads/src/precision_recipe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "topologies/core/config_reader.hpp"
#include "workloads/src/layer_reader.hpp"

namespace gpuscale::wl {
namespace {

// What a recipe's name means when a framework file says nothing else: FP32 everywhere, and SGD
// with momentum's one fused kernel reading weight, gradient and momentum and writing weight and
// momentum (5 x 4 bytes per parameter).
PrecisionRecipe fp32_recipe() {
  PrecisionRecipe r;
  r.name = "fp32";
  r.runs_as = "FP32 weights, gradients and arithmetic";
  return r;
}

Math read_math(const ConfigNode& node, std::string_view key) {
  const std::string text = read_one_of(node, key, {"fp32", "fp16", "tf32", "bf16", "fp8"});
  for (Math m : {Math::fp32, Math::fp16, Math::tf32, Math::bf16, Math::fp8}) {
    if (text == to_string(m)) return m;
  }
  throw std::logic_error("read_math: " + text);
}

// A storage dtype: fp32 4 bytes, fp16 and bf16 2, fp8 1.
int read_dtype_bytes(const ConfigNode& node, std::string_view what) {
  const std::string text = read_one_of(node, what, {"fp32", "fp16", "bf16", "fp8"});
  return text == "fp32" ? 4 : text == "fp8" ? 1 : 2;
}

std::vector<LayerType> read_layer_types(const ConfigNode& node) {
  std::vector<LayerType> out;
  for (const ConfigNode* item : items_or_one(node, "fp32_layers")) {
    const std::string name = read_string(*item, "fp32_layers");
    const auto type = layer_type_from_string(name);
    if (!type) throw ConfigError(item->origin(), fmt::format("fp32_layers: '{}' is no layer type", name));
    out.push_back(*type);
  }
  return out;
}

PrecisionRecipe read_recipe(const std::string& name, const ConfigNode& node) {
  PrecisionRecipe r = fp32_recipe();
  r.name = name;
  r.origin = node.origin();
  if (node.is_map() && node.find("unavailable") != nullptr) {
    MapReader only(node, "precision " + name, {"unavailable"});
    r.unavailable = only.string("unavailable", "\"MXNet 1.1 has no AMP (mxnet.contrib.amp came with 1.5.0)\"");
    return r;
  }
  MapReader m(node, "precision " + name,
              {"runs_as", "gemm_math", "fp32_layers", "activations", "weights", "gradients",
               "master_weights", "master_gradients", "weight_casts", "gemm_scope", "outside_math",
               "activation_casts", "update", "overflow_sync"});
  r.runs_as = m.string("runs_as", "\"torch.cuda.amp: autocast + GradScaler\"");
  r.gemm_math = read_math(m.require("gemm_math", "fp16"), "gemm_math");
  if (const ConfigNode* n = m.find("fp32_layers")) r.fp32_layers = read_layer_types(*n);
  r.activation_bytes = read_dtype_bytes(m.require("activations", "fp16"), "activations");
  r.weight_bytes = read_dtype_bytes(m.require("weights", "fp32"), "weights");
  r.gradient_bytes = read_dtype_bytes(m.require("gradients", "fp32"), "gradients");
  if (const ConfigNode* n = m.find("master_weights")) r.master_weights = read_bool(*n, "master_weights");
  if (const ConfigNode* n = m.find("master_gradients")) {
    r.master_gradients = read_bool(*n, "master_gradients");
  }
  if (r.master_gradients && !r.master_weights) {
    throw ConfigError(m.find("master_gradients")->origin(),
                      "master_gradients needs master_weights: true (FP32 gradients are filled "
                      "for the FP32 master weights)");
  }
  if (const ConfigNode* n = m.find("weight_casts")) {
    const std::string casts =
        read_one_of(*n, "weight_casts", {"none", "per_forward", "per_iteration"});
    r.weight_casts = casts == "per_forward"     ? WeightCasts::per_forward
                     : casts == "per_iteration" ? WeightCasts::per_iteration
                                                : WeightCasts::none;
  }
  if (const ConfigNode* n = m.find("gemm_scope")) {
    r.gemm_scope = read_one_of(*n, "gemm_scope", {"all", "transformer_linears"}) == "all"
                       ? GemmScope::all
                       : GemmScope::transformer_linears;
  }
  if (const ConfigNode* n = m.find("outside_math")) r.outside_math = read_math(*n, "outside_math");
  if (r.outside_math == Math::fp32 || r.outside_math == Math::fp8) {
    throw ConfigError(m.find("outside_math")->origin(),
                      "outside_math must be a 16-bit math (fp16 or bf16): the lowered layers "
                      "outside gemm_scope run at it");
  }
  if (const ConfigNode* n = m.find("activation_casts")) {
    r.activation_casts = read_bool(*n, "activation_casts");
  }
  MapReader u(m.require("update", "{bytes_per_param: 28, kernels_per_tensor: 2}"), "update",
              {"bytes_per_param", "kernels_per_tensor"});
  r.update_bytes_per_param = read_number(u.require("bytes_per_param", "28"), "bytes_per_param", 1, 1000);
  r.update_kernels_per_tensor = static_cast<int>(
      read_integer(u.require("kernels_per_tensor", "2"), "kernels_per_tensor", 1, 100));
  if (const ConfigNode* n = m.find("overflow_sync")) r.overflow_sync = read_bool(*n, "overflow_sync");
  return r;
}

// The weights a layer's GEMMs read: a convolution's, a fully connected layer's or an LSTM's
// weight, an attention layer's projections (layer_costs.cpp: q, k, v and out, or GNMT's
// linear_q and linear_k).
double gemm_weight_elements(const Layer& layer) {
  if (layer.type != LayerType::Attention) return weight_elements(layer);
  const double d = static_cast<double>(layer.output.channels);
  return layer.params.additive ? 2 * d * d : 2 * d * d + 2 * d * attention_kv_width(layer);
}

}  // namespace

const char* to_string(Math math) {
  switch (math) {
    case Math::fp32: return "fp32";
    case Math::fp16: return "fp16";
    case Math::tf32: return "tf32";
    case Math::bf16: return "bf16";
    case Math::fp8: return "fp8";
  }
  return "?";
}

bool PrecisionRecipe::lowers(LayerType type) const {
  if (activation_bytes == 4 && gemm_math == Math::fp32) return false;
  return std::find(fp32_layers.begin(), fp32_layers.end(), type) == fp32_layers.end();
}

Math PrecisionRecipe::math_of(LayerType type, bool in_transformer_layer) const {
  if (!lowers(type)) return Math::fp32;
  if (gemm_scope == GemmScope::all) return gemm_math;
  const bool linear = type == LayerType::Conv || type == LayerType::Fc ||
                      type == LayerType::Attention;
  return linear && in_transformer_layer ? gemm_math : outside_math;
}

int PrecisionRecipe::output_bytes_of(LayerType type) const {
  return lowers(type) ? activation_bytes : 4;
}

double PrecisionRecipe::optimizer_bytes_per_param(int state_arrays) const {
  const int state_bytes = master_weights ? 4 : weight_bytes;
  return state_arrays * state_bytes + (master_weights ? 4 : 0);
}

double cast_weight_elements(const Layer& layer, const PrecisionRecipe& recipe,
                            bool in_transformer_layer) {
  switch (recipe.weight_casts) {
    case WeightCasts::none: return 0;
    case WeightCasts::per_forward:
      return recipe.lowers(layer.type) && layer.shares < 0 ? gemm_weight_elements(layer) : 0;
    case WeightCasts::per_iteration:
      return recipe.math_of(layer.type, in_transformer_layer) == Math::fp8 && layer.shares < 0
                 ? gemm_weight_elements(layer)
                 : 0;
  }
  return 0;
}

const std::vector<std::string>& precision_recipe_names() {
  static const std::vector<std::string> names = {"fp32", "tf32", "amp", "fp16", "bf16", "fp8"};
  return names;
}

void check_precision_recipe_name(const std::string& name, const Origin& at) {
  const auto& names = precision_recipe_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw ConfigError(at, unknown_name_message("precision", name, names));
  }
}

void set_precision(Workload& workload, const std::string& recipe, const Origin& at) {
  check_precision_recipe_name(recipe, at);
  workload.recipe = recipe;
  workload.recipe_origin = at;
  workload.precision = recipe == "fp32" || recipe == "tf32" ? Precision::Fp32 : Precision::Fp16;
}

std::vector<PrecisionRecipe> read_precision_recipes(const ConfigNode* section) {
  std::vector<PrecisionRecipe> out;
  if (section != nullptr) {
    if (!section->is_map()) {
      throw ConfigError(section->origin(), "precision must map recipe names (fp32, tf32, amp, "
                                           "fp16, bf16, fp8) to what the framework runs");
    }
    for (const ConfigNode::Entry& e : section->entries()) {
      check_precision_recipe_name(e.key, e.where());
      out.push_back(read_recipe(e.key, e.value));
    }
  }
  const bool has_fp32 = std::any_of(out.begin(), out.end(),
                                    [](const PrecisionRecipe& r) { return r.name == "fp32"; });
  if (!has_fp32) out.insert(out.begin(), fp32_recipe());
  return out;
}

const PrecisionRecipe& find_precision_recipe(const std::vector<PrecisionRecipe>& recipes,
                                             const std::string& name, const std::string& framework,
                                             const Origin& asked_at) {
  check_precision_recipe_name(name, asked_at);
  std::vector<std::string> available;
  const PrecisionRecipe* found = nullptr;
  for (const PrecisionRecipe& r : recipes) {
    if (r.unavailable.empty()) available.push_back(r.name);
    if (r.name == name) found = &r;
  }
  if (found != nullptr && found->unavailable.empty()) return *found;
  const std::string why = found != nullptr ? found->unavailable
                                           : fmt::format("its file has no '{}' recipe", name);
  throw ConfigError(asked_at, fmt::format("framework {} cannot train at precision {}: {} (its "
                                          "precisions: {})",
                                          framework, name, why, fmt::join(available, ", ")));
}

}  // namespace gpuscale::wl
