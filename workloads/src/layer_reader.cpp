#include "workloads/src/layer_reader.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

#include "topologies/core/config_reader.hpp"

namespace gpuscale::wl {
namespace {

constexpr long kMaxDimension = 1L << 20;

struct TypeName {
  LayerType type;
  const char* name;
};
constexpr std::array kComputeTypes = {
    TypeName{LayerType::Conv, "conv"},         TypeName{LayerType::Fc, "fc"},
    TypeName{LayerType::Pool, "pool"},         TypeName{LayerType::Relu, "relu"},
    TypeName{LayerType::Tanh, "tanh"},         TypeName{LayerType::Lrn, "lrn"},
    TypeName{LayerType::BatchNorm, "batchnorm"}, TypeName{LayerType::Dropout, "dropout"},
    TypeName{LayerType::Softmax, "softmax"},   TypeName{LayerType::Upsample, "upsample"},
    TypeName{LayerType::PixelShuffle, "pixel_shuffle"},
    TypeName{LayerType::Embedding, "embedding"}, TypeName{LayerType::Attention, "attention"},
    TypeName{LayerType::LayerNorm, "layernorm"}, TypeName{LayerType::RoiAlign, "roi_align"},
    TypeName{LayerType::Lstm, "lstm"},         TypeName{LayerType::Glu, "glu"},
};

// A size given as `k` or `[kh, kw]`.
std::pair<int, int> read_pair(const ConfigNode& node, const std::string& what, long min) {
  if (node.is_sequence()) {
    if (node.items().size() != 2) {
      throw ConfigError(node.origin(), fmt::format("{} must be one number or [height, width]", what));
    }
    return {static_cast<int>(read_integer(node.items()[0], what, min, kMaxDimension)),
            static_cast<int>(read_integer(node.items()[1], what, min, kMaxDimension))};
  }
  const int v = static_cast<int>(read_integer(node, what, min, kMaxDimension));
  return {v, v};
}

// Pooling windows tile their input unless told otherwise: their stride defaults to the kernel.
void read_window(const MapReader& r, LayerParams& p, bool kernel_required,
                 bool stride_defaults_to_kernel) {
  const std::string& what = r.what();
  if (const ConfigNode* k = kernel_required ? &r.require("kernel", "3") : r.find("kernel")) {
    std::tie(p.kernel_h, p.kernel_w) = read_pair(*k, "kernel of " + what, 1);
  }
  if (const ConfigNode* s = r.find("stride")) {
    std::tie(p.stride_h, p.stride_w) = read_pair(*s, "stride of " + what, 1);
  } else if (stride_defaults_to_kernel) {
    std::tie(p.stride_h, p.stride_w) = std::pair{p.kernel_h, p.kernel_w};
  }
  if (const ConfigNode* pad = r.find("pad")) {
    if (pad->is_scalar() && pad->value() == "same") {
      if (p.kernel_h % 2 == 0 || p.kernel_w % 2 == 0) {
        throw ConfigError(pad->origin(), fmt::format("pad 'same' of {} needs an odd kernel (give "
                                                     "the pad as a number)", what));
      }
      p.pad_h = p.kernel_h / 2;
      p.pad_w = p.kernel_w / 2;
    } else {
      std::tie(p.pad_h, p.pad_w) = read_pair(*pad, "pad of " + what, 0);
    }
  }
}

LayerParams read_params(LayerType type, const MapReader& r) {
  LayerParams p;
  const std::string& what = r.what();
  switch (type) {
    case LayerType::Conv:
      p.filters = read_integer(r.require("filters", "64"), "filters of " + what, 1, kMaxDimension);
      read_window(r, p, true, false);
      if (const ConfigNode* g = r.find("groups")) {
        p.groups = static_cast<int>(read_integer(*g, "groups of " + what, 1, kMaxDimension));
      }
      if (const ConfigNode* b = r.find("bias")) p.bias = read_bool(*b, "bias of " + what);
      break;
    case LayerType::Fc:
      p.filters = read_integer(r.require("outputs", "1000"), "outputs of " + what, 1, kMaxDimension);
      if (const ConfigNode* b = r.find("bias")) p.bias = read_bool(*b, "bias of " + what);
      break;
    case LayerType::Pool: {
      if (const ConfigNode* kind = r.find("kind")) {
        const std::string k = read_string(*kind, "kind of " + what);
        if (k != "max" && k != "avg") {
          throw ConfigError(kind->origin(), unknown_name_message("pool kind", k, {"max", "avg"}));
        }
        p.pool = k == "max" ? PoolKind::Max : PoolKind::Avg;
      }
      if (const ConfigNode* g = r.find("global")) p.global_pool = read_bool(*g, "global of " + what);
      if (const ConfigNode* c = r.find("ceil")) p.ceil = read_bool(*c, "ceil of " + what);
      read_window(r, p, !p.global_pool, true);
      break;
    }
    case LayerType::Lrn:
      if (const ConfigNode* s = r.find("size")) {
        p.lrn_size = static_cast<int>(read_integer(*s, "size of " + what, 1, 1024));
      }
      break;
    case LayerType::Dropout:
      if (const ConfigNode* rate = r.find("rate")) {
        p.dropout_rate = read_number(*rate, "rate of " + what, 0.0, 0.999);
      }
      break;
    case LayerType::Upsample:
    case LayerType::PixelShuffle:
      p.factor = static_cast<int>(read_integer(r.require("factor", "2"), "factor of " + what, 1, 64));
      break;
    case LayerType::Embedding:
      p.vocab = read_integer(r.require("vocab", "32000"), "vocab of " + what, 1, 1L << 40);
      p.filters = read_integer(r.require("dim", "512"), "dim of " + what, 1, kMaxDimension);
      break;
    case LayerType::RoiAlign:
      p.rois = read_integer(r.require("rois", "512"), "rois of " + what, 1, kMaxDimension);
      p.kernel_h = p.kernel_w =
          static_cast<int>(read_integer(r.require("size", "7"), "size of " + what, 1, 1024));
      break;
    case LayerType::Attention:
      if (const ConfigNode* h = r.find("heads")) {
        p.heads = static_cast<int>(read_integer(*h, "heads of " + what, 1, kMaxDimension));
      }
      if (const ConfigNode* k = r.find("kv_heads")) {
        p.kv_heads = static_cast<int>(read_integer(*k, "kv_heads of " + what, 1, kMaxDimension));
      }
      if (const ConfigNode* b = r.find("bias")) p.bias = read_bool(*b, "bias of " + what);
      if (const ConfigNode* f = r.find("fused")) p.fused = read_bool(*f, "fused of " + what);
      if (const ConfigNode* s = r.find("score")) {
        const std::string score = read_string(*s, "score of " + what);
        if (score != "dot" && score != "additive") {
          throw ConfigError(s->origin(), unknown_name_message("attention score", score,
                                                              {"dot", "additive"}));
        }
        p.additive = score == "additive";
        if (p.additive && (r.find("heads") || r.find("kv_heads") || r.find("bias"))) {
          throw ConfigError(s->origin(), fmt::format("{}: additive attention has one head and "
                                                     "no projection biases (drop heads, "
                                                     "kv_heads and bias)", what));
        }
        if (p.additive && p.fused) {
          throw ConfigError(s->origin(), fmt::format("{}: additive attention has no fused kernel "
                                                     "(drop fused: true, or use score: dot)",
                                                     what));
        }
      }
      break;
    case LayerType::Lstm:
      p.filters = read_integer(r.require("hidden", "1024"), "hidden of " + what, 1, kMaxDimension);
      if (const ConfigNode* b = r.find("bidirectional")) {
        p.bidirectional = read_bool(*b, "bidirectional of " + what);
      }
      break;
    default:
      break;
  }
  return p;
}

// Every type also takes `from` (see read_layer_item).
std::vector<std::string> allowed_keys(LayerType type) {
  switch (type) {
    case LayerType::Conv:
      return {"name", "filters", "kernel", "stride", "pad", "groups", "bias", "shares"};
    case LayerType::Fc:
      return {"name", "outputs", "bias", "shares"};
    case LayerType::Pool:
      return {"name", "kind", "kernel", "stride", "pad", "ceil", "global"};
    case LayerType::Lrn:
      return {"name", "size"};
    case LayerType::Dropout:
      return {"name", "rate"};
    case LayerType::Upsample:
    case LayerType::PixelShuffle:
      return {"name", "factor"};
    case LayerType::Embedding:
      return {"name", "vocab", "dim", "shares"};
    case LayerType::Attention:
      return {"name", "heads", "kv_heads", "bias", "memory", "score", "fused"};
    case LayerType::Lstm:
      return {"name", "hidden", "bidirectional"};
    case LayerType::RoiAlign:
      return {"name", "rois", "size"};
    default:
      return {"name"};
  }
}

// One output dimension of a sliding window; `ceil` is the Caffe/MXNet "full" convention, which
// drops a last window that would start inside the padding.
long window_output(long in, int kernel, int stride, int pad, bool ceil, const Layer& layer,
                   const char* axis) {
  if (in + 2L * pad < kernel) {
    throw ConfigError(layer.origin,
                      fmt::format("layer '{}': kernel {} is larger than its padded input {} {} "
                                  "(reduce the kernel or add pad)",
                                  layer.name, kernel, axis, in + 2L * pad));
  }
  const long span = in + 2L * pad - kernel;
  long out = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil && pad > 0 && (out - 1) * stride >= in + pad) --out;
  return out;
}

}  // namespace

const char* to_string(LayerType type) {
  switch (type) {
    case LayerType::Input: return "input";
    case LayerType::Concat: return "concat";
    case LayerType::Add: return "add";
    default:
      for (const auto& t : kComputeTypes) {
        if (t.type == type) return t.name;
      }
  }
  return "?";
}

std::optional<LayerType> layer_type_from_string(const std::string& name) {
  for (const auto& t : kComputeTypes) {
    if (name == t.name) return t.type;
  }
  return std::nullopt;
}

std::vector<std::string> layer_type_names() {
  std::vector<std::string> names;
  for (const auto& t : kComputeTypes) names.emplace_back(t.name);
  return names;
}

LayerItem read_layer_item(LayerType type, const ConfigNode& node, const std::string& what) {
  std::vector<std::string> keys = allowed_keys(type);
  keys.emplace_back("from");
  MapReader r(node, what, keys);
  return {read_params(type, r), r.optional_string("name"), r.optional_string("from"),
          r.optional_string("memory"), r.optional_string("shares")};
}

void check_tensor_sizes(const Layer& layer) {
  // cuDNN's tensor descriptors hold at most 2^31 - 1 elements (cudnnSetTensorNdDescriptor: "the
  // total size of a tensor ... is limited to 2 Giga-elements"); no batch makes a larger one run.
  constexpr double kMaxTensorElements = 2147483647.0;
  const auto refuse = [&](std::string_view tensor, double elements) {
    throw ConfigError(layer.origin,
                      fmt::format("layer '{}': its {} holds {:.0f} elements per sample, more than "
                                  "one cuDNN tensor holds ({:.0f}; make the layer smaller)",
                                  layer.name, tensor, elements, kMaxTensorElements));
  };
  const Shape& out = layer.output;
  const double output = static_cast<double>(out.channels) * out.height * out.width;
  if (output > kMaxTensorElements) refuse(fmt::format("output {}", to_string(out)), output);
  if (const double weights = weight_elements(layer); weights > kMaxTensorElements) {
    refuse("weight", weights);
  }
}

Shape infer_output_shape(const Layer& layer, const Shape& in) {
  const LayerParams& p = layer.params;
  switch (layer.type) {
    case LayerType::Conv: {
      if (in.channels % p.groups != 0 || p.filters % p.groups != 0) {
        throw ConfigError(layer.origin,
                          fmt::format("layer '{}': groups {} must divide its {} input channels and "
                                      "{} filters", layer.name, p.groups, in.channels, p.filters));
      }
      return {p.filters,
              window_output(in.height, p.kernel_h, p.stride_h, p.pad_h, false, layer, "height"),
              window_output(in.width, p.kernel_w, p.stride_w, p.pad_w, false, layer, "width")};
    }
    case LayerType::Fc:
      return {p.filters, 1, 1};
    case LayerType::Pool:
      if (p.global_pool) return {in.channels, 1, 1};
      return {in.channels,
              window_output(in.height, p.kernel_h, p.stride_h, p.pad_h, p.ceil, layer, "height"),
              window_output(in.width, p.kernel_w, p.stride_w, p.pad_w, p.ceil, layer, "width")};
    case LayerType::Upsample:
      return {in.channels, in.height * p.factor, in.width * p.factor};
    case LayerType::PixelShuffle: {
      const long f2 = static_cast<long>(p.factor) * p.factor;
      if (in.channels % f2 != 0) {
        throw ConfigError(layer.origin,
                          fmt::format("layer '{}': pixel_shuffle by {} needs channels divisible by "
                                      "{}, its input has {}", layer.name, p.factor, f2, in.channels));
      }
      return {in.channels / f2, in.height * p.factor, in.width * p.factor};
    }
    case LayerType::Glu:
      if (in.channels % 2 != 0) {
        throw ConfigError(layer.origin,
                          fmt::format("layer '{}': glu gates one half of its channels with the "
                                      "other and needs an even count, its input has {}",
                                      layer.name, in.channels));
      }
      return {in.channels / 2, in.height, in.width};
    case LayerType::Embedding:
      // Each position of the input holds one id (channels = 1); each becomes a row of `dim`.
      if (in.channels != 1) {
        throw ConfigError(layer.origin,
                          fmt::format("layer '{}': an embedding reads one id per position, its "
                                      "input {} has {} channels (give ids as 1 x positions x 1)",
                                      layer.name, to_string(in), in.channels));
      }
      return {p.filters, in.height, in.width};
    case LayerType::RoiAlign:
      // The crops are stacked along the height: convolutions over them cost what they cost per
      // region (but for the rows where neighbouring crops meet).
      return {in.channels, p.rois * p.kernel_h, p.kernel_w};
    case LayerType::Lstm:
      return {p.filters * (p.bidirectional ? 2 : 1), in.height, in.width};
    case LayerType::Attention:
      if (in.channels % p.heads != 0) {
        throw ConfigError(layer.origin,
                          fmt::format("layer '{}': {} heads must divide its {} input channels",
                                      layer.name, p.heads, in.channels));
      }
      if (p.kv_heads != 0 && p.heads % p.kv_heads != 0) {
        throw ConfigError(layer.origin,
                          fmt::format("layer '{}': {} kv_heads must divide its {} heads (each "
                                      "key and value head serves a group of query heads)",
                                      layer.name, p.kv_heads, p.heads));
      }
      return in;
    default:
      return in;
  }
}

}  // namespace gpuscale::wl
