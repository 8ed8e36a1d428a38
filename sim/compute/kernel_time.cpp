#include "sim/compute/kernel_time.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/core/config_reader.hpp"

namespace gpuscale::compute {
namespace {

constexpr std::array<const char*, kKernelClassCount> kKernelClassNames{
    "conv_forward",          "conv_backward_data",          "conv_backward_weights",
    "conv_forward_winograd", "conv_backward_data_winograd", "conv_backward_weights_winograd",
    "gemm",                  "elementwise"};

constexpr std::array<const char*, kTrainingPassCount> kTrainingPassNames{
    "forward", "backward_data", "backward_weights"};

template <std::size_t N>
std::optional<int> index_of(const std::array<const char*, N>& names, const std::string& name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<int>(i);
  }
  return std::nullopt;
}

// Efficiencies may exceed 1 where FLOPs are counted as direct convolution but cuDNN runs a
// cheaper algorithm (Winograd: 2.25x to 4x fewer multiplies for 3x3 filters), or where
// operands stay in the L2 cache; beyond these bounds a value is a typo.
constexpr double kMaxComputeEfficiency = 4.0;
constexpr double kMaxMemoryEfficiency = 2.0;

// A mapping from every kernel class to an efficiency.
std::array<double, kKernelClassCount> read_class_table(const ConfigNode& node,
                                                       const std::string& what, double max) {
  MapReader r(node, what, kernel_class_names());
  std::array<double, kKernelClassCount> table{};
  for (int c = 0; c < kKernelClassCount; ++c) {
    const std::string key = kKernelClassNames[c];
    table[c] = read_number(r.require(key, "0.8"), fmt::format("{} of {}", key, what), 0.01, max);
  }
  return table;
}

}  // namespace

std::string to_string(KernelClass c) { return kKernelClassNames[static_cast<int>(c)]; }

std::optional<KernelClass> kernel_class_from_string(const std::string& name) {
  if (auto i = index_of(kKernelClassNames, name)) return static_cast<KernelClass>(*i);
  return std::nullopt;
}

std::vector<std::string> kernel_class_names() {
  return {kKernelClassNames.begin(), kKernelClassNames.end()};
}

std::string to_string(TrainingPass p) { return kTrainingPassNames[static_cast<int>(p)]; }

std::optional<TrainingPass> training_pass_from_string(const std::string& name) {
  if (auto i = index_of(kTrainingPassNames, name)) return static_cast<TrainingPass>(*i);
  return std::nullopt;
}

std::vector<std::string> training_pass_names() {
  return {kTrainingPassNames.begin(), kTrainingPassNames.end()};
}

long ConvShape::out_height() const {
  return (in_height + 2 * pad_height - filter_height) / stride_height + 1;
}

long ConvShape::out_width() const {
  return (in_width + 2 * pad_width - filter_width) / stride_width + 1;
}

KernelClass conv_kernel_class(const ConvShape& s, TrainingPass pass) {
  const bool winograd = s.filter_height >= 2 && s.filter_width >= 2 && s.stride_height == 1 &&
                        s.stride_width == 1;
  switch (pass) {
    case TrainingPass::forward:
      return winograd ? KernelClass::conv_forward_winograd : KernelClass::conv_forward;
    case TrainingPass::backward_data:
      return winograd ? KernelClass::conv_backward_data_winograd : KernelClass::conv_backward_data;
    case TrainingPass::backward_weights:
      return winograd ? KernelClass::conv_backward_weights_winograd
                      : KernelClass::conv_backward_weights;
  }
  throw std::logic_error("unhandled training pass");
}

KernelWork conv_kernel_work(const ConvShape& s, TrainingPass pass, Precision precision) {
  const double n = s.batch, c = s.in_channels, h = s.in_height, w = s.in_width;
  const double k = s.out_channels, r = s.filter_height, q_s = s.filter_width;
  if (s.batch < 1 || s.in_channels < 1 || s.out_channels < 1 || s.stride_height < 1 ||
      s.stride_width < 1 || s.pad_height < 0 || s.pad_width < 0 ||
      s.in_height + 2 * s.pad_height < s.filter_height ||
      s.in_width + 2 * s.pad_width < s.filter_width) {
    throw std::invalid_argument("convolution shape has no output (check sizes, pads, strides)");
  }
  if (s.groups < 1 || s.in_channels % s.groups != 0 || s.out_channels % s.groups != 0) {
    throw std::invalid_argument("convolution groups must divide input and output channels");
  }
  const double p = s.out_height(), q = s.out_width();
  const double c_group = c / static_cast<double>(s.groups);
  KernelWork work;
  work.kind = conv_kernel_class(s, pass);
  work.flops = 2 * n * k * c_group * r * q_s * p * q;
  work.bytes =
      bytes_per_element(precision) * (n * c * h * w + k * c_group * r * q_s + n * k * p * q);
  return work;
}

KernelWork gemm_kernel_work(double m, double n, double k, Precision precision) {
  if (m < 0 || n < 0 || k < 0) throw std::invalid_argument("GEMM with a negative dimension");
  return {KernelClass::gemm, 2 * m * n * k, bytes_per_element(precision) * (m * k + k * n + m * n)};
}

std::string shipped_analytic_params_path() { return GPUSCALE_ANALYTIC_PARAMS; }

AnalyticParams load_analytic_params(const std::string& path) {
  const ConfigNode doc = ConfigNode::load_file(path);
  MapReader r(doc, "analytic model parameters",
              {"name", "launch_overhead", "framework_overhead", "compute_efficiency",
               "memory_efficiency"});
  AnalyticParams a;
  a.origin = Origin{path, 0};
  a.name = r.string("name", "analytic-v100");
  a.launch_overhead = read_seconds(r.require("launch_overhead", "8 us"), "launch_overhead");
  a.framework_overhead =
      read_seconds(r.require("framework_overhead", "20 us"), "framework_overhead");

  MapReader compute(r.require("compute_efficiency", "{fp32: {conv_forward: 0.65, ...}, ...}"),
                    "compute_efficiency", precision_names());
  for (int p = 0; p < kPrecisionCount; ++p) {
    const std::string precision = to_string(static_cast<Precision>(p));
    const auto table = read_class_table(compute.require(precision, "{conv_forward: 0.65, ...}"),
                                        fmt::format("compute_efficiency {}", precision),
                                        kMaxComputeEfficiency);
    for (int c = 0; c < kKernelClassCount; ++c) a.compute_efficiency[c][p] = table[c];
  }
  a.memory_efficiency = read_class_table(
      r.require("memory_efficiency", "{conv_forward: 0.73, ...}"), "memory_efficiency",
      kMaxMemoryEfficiency);
  return a;
}

Seconds analytic_kernel_time(const GpuSpec& gpu, const AnalyticParams& params,
                             const KernelWork& work, Precision precision) {
  if (work.flops < 0 || work.bytes < 0) {
    throw std::invalid_argument("kernel with negative FLOPs or bytes");
  }
  const double compute_s =
      work.flops / (gpu.peak(precision).value * params.compute(work.kind, precision));
  const double memory_s =
      work.bytes / (gpu.copy_bandwidth().value * params.memory(work.kind));
  return {std::max(compute_s, memory_s) + params.launch_overhead.value};
}

Seconds analytic_layer_time(const GpuSpec& gpu, const AnalyticParams& params,
                            std::span<const KernelWork> kernels, Precision precision) {
  double total = params.framework_overhead.value;
  for (const KernelWork& k : kernels) total += analytic_kernel_time(gpu, params, k, precision).value;
  return {total};
}

}  // namespace gpuscale::compute
