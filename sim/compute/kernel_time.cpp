#include "sim/compute/kernel_time.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "topologies/core/config_reader.hpp"
#include "topologies/core/shipped_files.hpp"

namespace gpuscale::compute {
namespace {

constexpr std::array<const char*, kKernelClassCount> kKernelClassNames{
    "conv_forward", "conv_backward_data", "conv_backward_weights", "gemm", "elementwise",
    "recurrent_gemm", "fused_attention_forward", "fused_attention_backward"};

// A GEMM may reach its peak; operands that stay in the L2 cache may beat the copy bandwidth a
// little; beyond these bounds a value is a typo.
constexpr double kMaxComputeEfficiency = 1.0;
constexpr double kMaxMemoryEfficiency = 2.0;

// The share of the peak a kernel of class `c` reaches on `gpu`: the GPU's measured fused
// attention where it has one, else the analytic constants'.
double compute_efficiency(const GpuSpec& gpu, const AnalyticParams& params, KernelClass c,
                          Precision p) {
  if (gpu.fused_attention && c == KernelClass::fused_attention_forward) {
    return gpu.fused_attention->forward;
  }
  if (gpu.fused_attention && c == KernelClass::fused_attention_backward) {
    return gpu.fused_attention->backward;
  }
  return params.compute(c, p);
}

double read_fraction(MapReader& r, const std::string& key, const std::string& what, double max) {
  return read_number(r.require(key, "0.8"), fmt::format("{} of {}", key, what), 0.01, max);
}

ConvPrecisionParams read_conv_precision(const ConfigNode& node, const std::string& what) {
  MapReader r(node, what,
              {"gemm_efficiency", "gemm_fixed_cost", "epilogue_steps", "memory_efficiency",
               "winograd_efficiency", "winograd_5x5_efficiency", "winograd_fixed_cost",
               "winograd_fused_efficiency", "channel_multiple", "channel_slice"});
  ConvPrecisionParams p;
  MapReader passes(r.require("gemm_efficiency", "{forward: 0.9, backward_data: 0.9, "
                                                "backward_weights: 0.6}"),
                   what + " gemm_efficiency", training_pass_names());
  for (int i = 0; i < kTrainingPassCount; ++i) {
    p.gemm_efficiency[i] = read_fraction(passes, to_string(static_cast<TrainingPass>(i)),
                                         what + " gemm_efficiency", kMaxComputeEfficiency);
  }
  p.gemm_fixed_cost =
      read_seconds(r.require("gemm_fixed_cost", "10 us"), what + " gemm_fixed_cost");
  p.epilogue_steps =
      read_number(r.require("epilogue_steps", "10"), what + " epilogue_steps", 0, 1e4);
  p.memory_efficiency = read_fraction(r, "memory_efficiency", what, kMaxMemoryEfficiency);
  if (auto w = r.find("winograd_efficiency")) {
    p.winograd_efficiency =
        read_number(*w, what + " winograd_efficiency", 0.01, kMaxComputeEfficiency);
    p.winograd_5x5_efficiency = read_fraction(r, "winograd_5x5_efficiency", what,
                                              kMaxComputeEfficiency);
    p.winograd_fixed_cost =
        read_seconds(r.require("winograd_fixed_cost", "10 us"), what + " winograd_fixed_cost");
  }
  if (auto f = r.find("winograd_fused_efficiency")) {
    p.winograd_fused_efficiency =
        read_number(*f, what + " winograd_fused_efficiency", 0.01, kMaxComputeEfficiency);
  }
  if (auto m = r.find("channel_multiple")) {
    p.channel_multiple = static_cast<long>(read_number(*m, what + " channel_multiple", 1, 1024));
  }
  if (auto m = r.find("channel_slice")) {
    p.channel_slice = static_cast<long>(read_number(*m, what + " channel_slice", 1, 1024));
  }
  return p;
}

// Whether `p` takes the FP16 Tensor Core (`tensor`) constants: a later Tensor Core precision
// (TF32, BF16, FP8) the file gives none of, as DeepBench's V100 runs cannot (the file says so).
bool takes_tensor_constants(Precision p, const ConfigNode* given) {
  return given == nullptr && on_tensor_cores(p) && p != Precision::tensor;
}

// Per-precision values under `node` (a later Tensor Core precision the file omits takes
// `tensor`'s), each a fraction in [0.01, max].
std::array<double, kPrecisionCount> read_per_precision(const ConfigNode& node,
                                                       const std::string& what, double max) {
  MapReader r(node, what, precision_names());
  std::array<double, kPrecisionCount> v{};
  for (int p = 0; p < kPrecisionCount; ++p) {
    const auto precision = static_cast<Precision>(p);
    const std::string name = to_string(precision);
    v[p] = takes_tensor_constants(precision, r.find(name)) ? v[static_cast<int>(Precision::tensor)]
                                                           : read_fraction(r, name, what, max);
  }
  return v;
}

ConvModelParams read_conv_params(const ConfigNode& node) {
  std::vector<std::string> keys = precision_names();
  keys.push_back("tiles");
  MapReader r(node, "convolution", keys);
  ConvModelParams c;
  c.tiles.clear();
  for (const ConfigNode* item : items_or_one(r.require("tiles", "[{m: 128, n: 64}]"), "tiles")) {
    MapReader tile(*item, "convolution tile", {"m", "n"});
    c.tiles.push_back({read_integer(tile.require("m", "128"), "tile m", 1, 4096),
                       read_integer(tile.require("n", "64"), "tile n", 1, 4096)});
  }
  for (int p = 0; p < kPrecisionCount; ++p) {
    const auto precision = static_cast<Precision>(p);
    const std::string name = to_string(precision);
    if (takes_tensor_constants(precision, r.find(name))) {
      c.precision[p] = c.of(Precision::tensor);
      continue;
    }
    c.precision[p] = read_conv_precision(r.require(name, "{gemm_efficiency: ...}"),
                                         "convolution " + name);
  }
  return c;
}

}  // namespace

std::string to_string(KernelClass c) { return kKernelClassNames[static_cast<int>(c)]; }

KernelClass conv_kernel_class(TrainingPass pass) {
  switch (pass) {
    case TrainingPass::forward:
      return KernelClass::conv_forward;
    case TrainingPass::backward_data:
      return KernelClass::conv_backward_data;
    case TrainingPass::backward_weights:
      return KernelClass::conv_backward_weights;
  }
  throw std::logic_error("unhandled training pass");
}

KernelWork conv_kernel_work(const ConvShape& s, TrainingPass pass, Precision precision) {
  const double n = s.batch, c = s.in_channels, h = s.in_height, w = s.in_width;
  const double k = s.out_channels, r = s.filter_height, q_s = s.filter_width;
  check_conv_shape(s);
  const double p = s.out_height(), q = s.out_width();
  const double c_group = c / static_cast<double>(s.groups);
  KernelWork work;
  work.kind = conv_kernel_class(pass);
  work.flops = 2 * n * k * c_group * r * q_s * p * q;
  work.bytes =
      bytes_per_element(precision) * (n * c * h * w + k * c_group * r * q_s + n * k * p * q);
  return work;
}

KernelWork gemm_kernel_work(double m, double n, double k, Precision precision) {
  if (m < 0 || n < 0 || k < 0) throw std::invalid_argument("GEMM with a negative dimension");
  return {KernelClass::gemm, 2 * m * n * k, bytes_per_element(precision) * (m * k + k * n + m * n)};
}

KernelWork recurrent_gemm_work(double n, double h, Precision precision) {
  KernelWork w = gemm_kernel_work(n, 4 * h, h, precision);
  w.kind = KernelClass::recurrent_gemm;
  w.weight_rows = 4 * h;
  return w;
}

std::string shipped_analytic_params_path() {
  return data_root() + "/sim/compute/analytic-v100.yaml";
}

AnalyticParams load_analytic_params(const std::string& path) {
  const ConfigNode doc = ConfigNode::load_file(path);
  MapReader r(doc, "analytic model parameters",
              {"name", "launch_overhead", "framework_overhead", "gemm", "elementwise", "recurrent",
               "convolution"});
  AnalyticParams a;
  a.origin = Origin{path, 0};
  a.name = r.string("name", "analytic-v100");
  a.launch_overhead = read_seconds(r.require("launch_overhead", "8 us"), "launch_overhead");
  a.framework_overhead =
      read_seconds(r.require("framework_overhead", "20 us"), "framework_overhead");

  MapReader gemm(r.require("gemm", "{efficiency: {fp32: 0.8, ...}, memory_efficiency: 0.7}"),
                 "gemm", {"efficiency", "memory_efficiency"});
  a.gemm_efficiency =
      read_per_precision(gemm.require("efficiency", "{fp32: 0.8, fp16: 0.8, tensor: 0.8}"),
                         "gemm efficiency", kMaxComputeEfficiency);
  a.gemm_memory_efficiency =
      read_fraction(gemm, "memory_efficiency", "gemm", kMaxMemoryEfficiency);
  MapReader elementwise(r.require("elementwise", "{memory_efficiency: 1.0}"), "elementwise",
                        {"memory_efficiency"});
  a.elementwise_memory_efficiency =
      read_fraction(elementwise, "memory_efficiency", "elementwise", kMaxMemoryEfficiency);
  MapReader recurrent(
      r.require("recurrent", "{slab_rows: 128, memory_efficiency: {fp32: 0.9, ...}}"), "recurrent",
      {"slab_rows", "memory_efficiency"});
  a.recurrent_slab_rows =
      read_integer(recurrent.require("slab_rows", "128"), "recurrent slab_rows", 1, 4096);
  a.recurrent_memory_efficiency = read_per_precision(
      recurrent.require("memory_efficiency", "{fp32: 0.9, fp16: 0.9, tensor: 0.8}"),
      "recurrent memory_efficiency", kMaxMemoryEfficiency);
  a.conv = read_conv_params(r.require("convolution", "{tiles: ..., fp32: ..., ...}"));
  return a;
}

double AnalyticParams::compute(KernelClass c, Precision p) const {
  if (c == KernelClass::gemm || c == KernelClass::recurrent_gemm ||
      c == KernelClass::fused_attention_forward || c == KernelClass::fused_attention_backward) {
    return gemm_efficiency[static_cast<int>(p)];
  }
  // A streaming kernel's FLOPs never bind (<= a few FLOP/B against ridges of 20 and more): its
  // roofline is its bytes.
  if (c == KernelClass::elementwise) return 1.0;
  throw std::logic_error("a convolution is timed by its algorithm (conv_model.hpp)");
}

double AnalyticParams::memory(KernelClass c) const {
  if (c == KernelClass::gemm || c == KernelClass::fused_attention_forward ||
      c == KernelClass::fused_attention_backward) {
    return gemm_memory_efficiency;
  }
  if (c == KernelClass::elementwise) return elementwise_memory_efficiency;
  if (c == KernelClass::recurrent_gemm) {
    throw std::logic_error(
        "a recurrent GEMM's bandwidth depends on its shape (recurrent_bandwidth)");
  }
  throw std::logic_error("a convolution is timed by its algorithm (conv_model.hpp)");
}

BytesPerSecond recurrent_bandwidth(const GpuSpec& gpu, const AnalyticParams& params,
                                   double weight_rows, Precision precision) {
  const double slabs = std::ceil(weight_rows / params.recurrent_slab_rows);
  const double occupancy = std::min(1.0, slabs / gpu.sm_count);
  return {gpu.copy_bandwidth().value *
          params.recurrent_memory_efficiency[static_cast<int>(precision)] * occupancy};
}

Seconds analytic_kernel_time(const GpuSpec& gpu, const AnalyticParams& params,
                             const KernelWork& work, Precision layer_precision) {
  if (work.flops < 0 || work.bytes < 0) {
    throw std::invalid_argument("kernel with negative FLOPs or bytes");
  }
  const Precision precision = work.precision.value_or(layer_precision);
  const double efficiency = compute_efficiency(gpu, params, work.kind, precision);
  const double compute_s = work.flops / (gpu.peak(precision).value * efficiency);
  const double bandwidth = work.kind == KernelClass::recurrent_gemm
                               ? recurrent_bandwidth(gpu, params, work.weight_rows, precision).value
                               : gpu.copy_bandwidth().value * params.memory(work.kind);
  const double memory_s = work.bytes / bandwidth;
  return {std::max(compute_s, memory_s) + params.launch_overhead.value};
}

Seconds analytic_layer_time(const GpuSpec& gpu, const AnalyticParams& params,
                            std::span<const KernelWork> kernels, Precision precision) {
  double total = params.framework_overhead.value;
  for (const KernelWork& k : kernels) total += analytic_kernel_time(gpu, params, k, precision).value;
  return {total};
}

}  // namespace gpuscale::compute
