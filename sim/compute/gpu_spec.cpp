#include "sim/compute/gpu_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "topologies/core/config_reader.hpp"

namespace gpuscale::compute {
namespace {

constexpr std::array<const char*, kPrecisionCount> kPrecisionNames{"fp32", "fp16", "tensor",
                                                                   "tf32", "bf16", "fp8"};

// A positive quantity of a unit config_reader has no reader for ("15.7 TFLOP/s", "1530 MHz").
template <typename Quantity>
Quantity read_positive(const ConfigNode& node, const std::string& what,
                       Quantity (*parse)(std::string_view), std::string_view example) {
  if (!node.is_scalar()) {
    throw ConfigError(node.origin(), fmt::format("{} must be a single value (e.g. '{}')", what,
                                                 example));
  }
  Quantity q;
  try {
    q = parse(node.value());
  } catch (const std::invalid_argument& e) {
    throw ConfigError(node.origin(), fmt::format("{}: {}", what, e.what()));
  }
  if (q.value <= 0) {
    throw ConfigError(node.origin(), fmt::format("{} must be positive (write e.g. '{}')", what,
                                                 example));
  }
  return q;
}

GpuSpec read_gpu_spec(const ConfigNode& doc) {
  MapReader r(doc, "GPU spec", {"name", "description", "memory", "memory_bandwidth",
                                "copy_efficiency", "sm_count", "compute_capability", "boost_clock",
                                "peak", "fused_attention"});
  GpuSpec g;
  g.origin = Origin{doc.origin().file, 0};
  g.name = r.string("name", "V100-SXM2");
  g.description = r.optional_string("description").value_or("");
  const std::string what = fmt::format("GPU {}", g.name);
  g.memory = read_bytes(r.require("memory", "16 GB"), fmt::format("memory of {}", what));
  g.memory_bandwidth = read_bandwidth(r.require("memory_bandwidth", "900 GB/s"),
                                      fmt::format("memory_bandwidth of {}", what));
  g.copy_efficiency = read_number(r.require("copy_efficiency", "0.867"),
                                  fmt::format("copy_efficiency of {}", what), 0.01, 1.0);
  g.sm_count = static_cast<int>(
      read_integer(r.require("sm_count", "80"), fmt::format("sm_count of {}", what), 1, 100000));
  if (const ConfigNode* cc = r.find("compute_capability")) {
    g.compute_capability = static_cast<int>(
        std::lround(10 * read_number(*cc, fmt::format("compute_capability of {}", what), 1, 20)));
  }
  g.boost_clock = read_positive(r.require("boost_clock", "1530 MHz"),
                                fmt::format("boost_clock of {}", what), &parse_frequency,
                                "1530 MHz");

  MapReader p(r.require("peak", "{fp32: 15.7 TFLOP/s, fp16: 31.4 TFLOP/s}"),
              fmt::format("peak of {}", what), precision_names());
  auto rate = [&](const ConfigNode& node, std::string_view precision) {
    return read_positive(node, fmt::format("{} peak of {}", precision, what), &parse_flop_rate,
                         "15.7 TFLOP/s");
  };
  g.peak_fp32 = rate(p.require("fp32", "15.7 TFLOP/s"), "fp32");
  g.peak_fp16 = rate(p.require("fp16", "31.4 TFLOP/s"), "fp16");
  for (auto [name, peak] : {std::pair{"tensor", &g.peak_tensor}, std::pair{"tf32", &g.peak_tf32},
                            std::pair{"bf16", &g.peak_bf16}, std::pair{"fp8", &g.peak_fp8}}) {
    if (const ConfigNode* t = p.find(name)) *peak = rate(*t, name);
  }
  if (const ConfigNode* n = r.find("fused_attention")) {
    MapReader f(*n, fmt::format("fused_attention of {}", what), {"forward", "backward"});
    const auto share = [&](const char* pass) {
      return read_number(f.require(pass, "0.67"),
                         fmt::format("fused_attention {} of {} (a share of the peak)", pass, what),
                         0.01, 1.0);
    };
    g.fused_attention = GpuSpec::FusedAttention{share("forward"), share("backward")};
  }
  return g;
}

}  // namespace

std::string to_string(Precision p) { return kPrecisionNames[static_cast<int>(p)]; }

std::optional<Precision> precision_from_string(const std::string& name) {
  for (int i = 0; i < kPrecisionCount; ++i) {
    if (name == kPrecisionNames[i]) return static_cast<Precision>(i);
  }
  return std::nullopt;
}

std::vector<std::string> precision_names() {
  return {kPrecisionNames.begin(), kPrecisionNames.end()};
}

double bytes_per_element(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32:
      return 4;
    case Precision::fp8:
      return 1;
    default:
      return 2;
  }
}

bool on_tensor_cores(Precision p) { return p != Precision::fp32 && p != Precision::fp16; }

namespace {

// The Tensor Core peak of `p`, absent where the GPU has none for it.
const std::optional<FlopsPerSecond>& tensor_peak(const GpuSpec& g, Precision p) {
  switch (p) {
    case Precision::tf32: return g.peak_tf32;
    case Precision::bf16: return g.peak_bf16;
    case Precision::fp8: return g.peak_fp8;
    default: return g.peak_tensor;
  }
}

}  // namespace

bool GpuSpec::has(Precision p) const {
  return !on_tensor_cores(p) || tensor_peak(*this, p).has_value();
}

namespace {

std::vector<std::string> available(const GpuSpec& g) {
  std::vector<std::string> names;
  for (int p = 0; p < kPrecisionCount; ++p) {
    if (g.has(static_cast<Precision>(p))) names.push_back(kPrecisionNames[static_cast<size_t>(p)]);
  }
  return names;
}

}  // namespace

FlopsPerSecond GpuSpec::peak(Precision p) const {
  if (p == Precision::fp32) return peak_fp32;
  if (p == Precision::fp16) return peak_fp16;
  if (const auto& peak = tensor_peak(*this, p)) return *peak;
  throw ConfigError(origin, fmt::format("GPU {} has no {} Tensor Cores (no '{}' peak): its "
                                        "precisions are {}",
                                        name, p == Precision::tensor ? "FP16" : to_string(p),
                                        to_string(p), fmt::join(available(*this), ", ")));
}

std::string gpu_model_key(const std::string& model_name) {
  std::string key = model_name;
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return key;
}

const ShippedFolder& shipped_gpus() {
  static const ShippedFolder folder("GPU model", "GPUSCALE_GPUS_DIR", "topologies/gpus");
  return folder;
}

GpuSpec load_gpu_spec(const std::string& model_name_or_path, const Origin& named_at) {
  const bool is_path = model_name_or_path.find('/') != std::string::npos ||
                       model_name_or_path.ends_with(".yaml") || model_name_or_path.ends_with(".yml");
  const std::string key = is_path ? model_name_or_path : gpu_model_key(model_name_or_path);
  const std::vector<std::string> shipped = shipped_gpus().names();
  if (!is_path && std::find(shipped.begin(), shipped.end(), key) == shipped.end()) {
    // The name as the user wrote it; the hint compares keys, as the lookup does.
    throw ConfigError(named_at, fmt::format("unknown GPU model '{}' ({}), or give the path of a "
                                            ".yaml file",
                                            model_name_or_path, name_hint(key, shipped)));
  }
  const std::string path = shipped_gpus().resolve(key, "", named_at);
  const ConfigNode doc = ConfigNode::load_file(path);
  GpuSpec spec = read_gpu_spec(doc);
  if (!is_path && gpu_model_key(spec.name) != key) {
    const ConfigNode& name = *doc.find("name");
    throw ConfigError(name.origin(),
                      fmt::format("the file of GPU model '{}' names itself '{}' (the name must "
                                  "match the file name, ignoring case)",
                                  model_name_or_path, spec.name));
  }
  return spec;
}

}  // namespace gpuscale::compute
