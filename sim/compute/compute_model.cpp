// The two compute-time models behind compute_model.hpp.
//
// Analytic: each pass of each layer is a short list of kernels (docs/compute-model.md#from-
// layers-to-kernels), timed by analytic_layer_time (roofline per kernel + launch overhead per
// kernel + framework overhead once per pass):
//   conv  forward: cuDNN forward [+ bias add]; backward_data: cuDNN backward-data;
//         backward_weights: cuDNN backward-filter [+ bias gradient]
//   fc    every pass: GEMM m = batch, n = outputs, k = inputs [+ bias kernel as for conv]
//   other every pass: one elementwise kernel, flops = batch x per-sample FLOPs of the pass,
//         bytes = LayerCost::fwd_bytes(batch), or bwd_bytes(batch) split between the two
//         backward passes
//   input nothing.
// A pass the layer does not have (LayerCost::has_backward_*) costs 0 and pays no overhead.
//
// Profile: the measured time of each pass, looked up by layer name; reductions and updates from
// the analytic model.
#include "sim/compute/compute_model.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>
#include <vector>

namespace gpuscale::compute {
namespace {

constexpr int kForward = static_cast<int>(TrainingPass::forward);
constexpr int kBackwardData = static_cast<int>(TrainingPass::backward_data);
constexpr int kBackwardWeights = static_cast<int>(TrainingPass::backward_weights);

// The arithmetic the workload's precision runs on `gpu`: FP16 uses Tensor Cores where there are
// some (cuDNN and cuBLAS pick them for FP16 data since CUDA 9), CUDA-core FP16 elsewhere.
Precision kernel_precision(wl::Precision precision, const GpuSpec& gpu) {
  if (precision == wl::Precision::Fp32) return Precision::fp32;
  return gpu.peak_tensor ? Precision::tensor : Precision::fp16;
}

std::array<bool, kTrainingPassCount> passes_of(const wl::Layer& layer, const wl::LayerCost& cost) {
  if (layer.type == wl::LayerType::Input) return {false, false, false};
  return {true, cost.has_backward_data, cost.has_backward_weights};
}

LayerTimes to_layer_times(const std::array<double, kTrainingPassCount>& t) {
  return {{t[kForward]}, {t[kBackwardData]}, {t[kBackwardWeights]}};
}

void check_arguments(const wl::Workload& workload, const wl::WorkloadCosts& costs) {
  if (costs.layers.size() != workload.layers.size()) {
    throw std::invalid_argument(fmt::format("costs of {} layers for a workload of {}",
                                            costs.layers.size(), workload.layers.size()));
  }
}

// What one layer turns into, everything but the batch fixed at construction.
struct LayerPlan {
  enum class Mapping { none, conv, fc, elementwise };
  Mapping mapping = Mapping::none;
  std::array<bool, kTrainingPassCount> has_pass{};
  ConvShape conv;               // conv; `batch` is set per call
  double fc_inputs = 0;         // fc: k
  double fc_outputs = 0;        // fc: n
  double bias_outputs = 0;      // conv, fc with bias: output elements per sample, else 0
  double bias_params = 0;       // conv, fc with bias: bias elements
  // elementwise: work of pass p at batch N = N x per_sample[p] + per_batch[p]
  std::array<double, kTrainingPassCount> flops_per_sample{};
  std::array<double, kTrainingPassCount> bytes_per_sample{};
  std::array<double, kTrainingPassCount> bytes_per_batch{};
};

LayerPlan plan_layer(const wl::Workload& workload, const wl::WorkloadCosts& costs, int index) {
  const wl::Layer& layer = workload.layers[static_cast<size_t>(index)];
  const wl::LayerCost& cost = costs.layers[static_cast<size_t>(index)];
  const wl::LayerParams& p = layer.params;
  LayerPlan plan;
  plan.has_pass = passes_of(layer, cost);
  switch (layer.type) {
    case wl::LayerType::Input:
      return plan;
    case wl::LayerType::Conv: {
      plan.mapping = LayerPlan::Mapping::conv;
      ConvShape& s = plan.conv;
      s.in_channels = layer.input.channels;
      s.in_height = layer.input.height;
      s.in_width = layer.input.width;
      s.out_channels = p.filters;
      s.filter_height = p.kernel_h;
      s.filter_width = p.kernel_w;
      s.pad_height = p.pad_h;
      s.pad_width = p.pad_w;
      s.stride_height = p.stride_h;
      s.stride_width = p.stride_w;
      s.groups = p.groups;
      if (s.out_height() != layer.output.height || s.out_width() != layer.output.width) {
        throw std::logic_error(fmt::format("layer {}: convolution output {}x{} differs from the "
                                           "inferred shape {}",
                                           layer.name, s.out_height(), s.out_width(),
                                           wl::to_string(layer.output)));
      }
      break;
    }
    case wl::LayerType::Fc:
      plan.mapping = LayerPlan::Mapping::fc;
      plan.fc_inputs = static_cast<double>(layer.input.elements());
      plan.fc_outputs = static_cast<double>(p.filters);
      break;
    default: {
      plan.mapping = LayerPlan::Mapping::elementwise;
      const double element_bytes = wl::bytes_per_element(workload.precision);
      double in_elements = 0;
      for (int input : layer.inputs) {
        in_elements +=
            static_cast<double>(workload.layers[static_cast<size_t>(input)].output.elements());
      }
      plan.flops_per_sample = {cost.fwd_flops, cost.bwd_data_flops, cost.bwd_weight_flops};
      plan.bytes_per_sample[kForward] = cost.fwd_activation_bytes;
      plan.bytes_per_batch[kForward] = cost.param_bytes;
      // bwd_bytes(N) split so that the two passes sum to it: the weights pass re-reads the input
      // and writes the parameter gradients; the data pass reads the output gradient and the
      // parameters and writes the input gradient. Without a data pass, the weights pass reads
      // the output gradient too.
      double weights_per_sample = 0, weights_per_batch = 0;
      if (cost.has_backward_weights) {
        weights_per_sample = cost.has_backward_data ? in_elements * element_bytes
                                                    : cost.bwd_activation_bytes;
        weights_per_batch = cost.param_bytes;
        plan.bytes_per_sample[kBackwardWeights] = weights_per_sample;
        plan.bytes_per_batch[kBackwardWeights] = weights_per_batch;
      }
      if (cost.has_backward_data) {
        plan.bytes_per_sample[kBackwardData] = cost.bwd_activation_bytes - weights_per_sample;
        plan.bytes_per_batch[kBackwardData] = 2 * cost.param_bytes - weights_per_batch;
      }
      return plan;
    }
  }
  if (p.bias) {
    plan.bias_outputs = static_cast<double>(layer.output.elements());
    plan.bias_params = static_cast<double>(p.filters);
  }
  return plan;
}

class AnalyticModel final : public ComputeTimeModel {
 public:
  AnalyticModel(const wl::Workload& workload, const wl::WorkloadCosts& costs, const GpuSpec& gpu,
                const AnalyticParams& params)
      : gpu_(gpu),
        params_(params),
        precision_(kernel_precision(workload.precision, gpu)),
        element_bytes_(bytes_per_element(precision_)) {
    check_arguments(workload, costs);
    gpu_.peak(precision_);  // a GPU without the precision fails here, not mid-replay
    plans_.reserve(workload.layers.size());
    for (size_t i = 0; i < workload.layers.size(); ++i) {
      plans_.push_back(plan_layer(workload, costs, static_cast<int>(i)));
    }
  }

  std::string name() const override { return "analytic " + gpu_.name; }

  LayerTimes layer_times(int layer, int batch) const override {
    if (layer < 0 || static_cast<size_t>(layer) >= plans_.size()) {
      throw std::out_of_range(fmt::format("layer {} of a workload of {}", layer, plans_.size()));
    }
    if (batch < 1) throw std::invalid_argument("batch size must be >= 1");
    const LayerPlan& plan = plans_[static_cast<size_t>(layer)];
    std::array<double, kTrainingPassCount> t{};
    for (int p = 0; p < kTrainingPassCount; ++p) {
      if (!plan.has_pass[p]) continue;
      std::array<KernelWork, 2> kernels;
      const int count = kernels_of(plan, static_cast<TrainingPass>(p), batch, kernels);
      t[p] = analytic_layer_time(gpu_, params_, std::span(kernels.data(), count), precision_)
                 .value;
    }
    return to_layer_times(t);
  }

  // A sum of two inputs into one output: 3 elements moved per addition.
  Seconds reduction_time(double bytes) const override {
    if (bytes < 0) throw std::invalid_argument("reduction of negative bytes");
    if (bytes == 0) return {0};
    const KernelWork sum{KernelClass::elementwise, bytes / element_bytes_ / 3, bytes};
    return analytic_kernel_time(gpu_, params_, sum, precision_);
  }

  // SGD with momentum, one fused kernel: reads weight, gradient and momentum, writes weight and
  // momentum (5 elements moved); m = mu m - lr g, w += m: 4 FLOPs. Plus the framework overhead
  // once: MXNet runs one optimizer operator per key.
  Seconds update_time(long elements) const override {
    if (elements < 0) throw std::invalid_argument("update of a negative number of elements");
    if (elements == 0) return {0};
    const double n = static_cast<double>(elements);
    const KernelWork sgd{KernelClass::elementwise, 4 * n, 5 * n * element_bytes_};
    return analytic_layer_time(gpu_, params_, std::span(&sgd, 1), precision_);
  }

 private:
  // The kernels of one pass at `batch` into `out`; returns how many.
  int kernels_of(const LayerPlan& plan, TrainingPass pass, int batch,
                 std::array<KernelWork, 2>& out) const {
    const double n = batch;
    int count = 0;
    switch (plan.mapping) {
      case LayerPlan::Mapping::none:
        return 0;
      case LayerPlan::Mapping::elementwise: {
        const int p = static_cast<int>(pass);
        out[count++] = {KernelClass::elementwise, n * plan.flops_per_sample[p],
                        n * plan.bytes_per_sample[p] + plan.bytes_per_batch[p]};
        return count;
      }
      case LayerPlan::Mapping::conv: {
        ConvShape shape = plan.conv;
        shape.batch = batch;
        out[count++] = conv_kernel_work(shape, pass, precision_);
        break;
      }
      case LayerPlan::Mapping::fc:
        out[count++] = gemm_kernel_work(n, plan.fc_outputs, plan.fc_inputs, precision_);
        break;
    }
    // Bias: forward adds it to every output (read and write the output, read the bias);
    // backward-weights sums the output gradient over everything but the channel (read it,
    // write the bias gradient). One addition per output element either way.
    if (plan.bias_outputs > 0) {
      const double outputs = n * plan.bias_outputs;
      if (pass == TrainingPass::forward) {
        out[count++] = {KernelClass::elementwise, outputs,
                        (2 * outputs + plan.bias_params) * element_bytes_};
      } else if (pass == TrainingPass::backward_weights) {
        out[count++] = {KernelClass::elementwise, outputs,
                        (outputs + plan.bias_params) * element_bytes_};
      }
    }
    return count;
  }

  GpuSpec gpu_;
  AnalyticParams params_;
  Precision precision_;
  double element_bytes_;
  std::vector<LayerPlan> plans_;  // parallel to Workload::layers
};

class ProfileModel final : public ComputeTimeModel {
 public:
  ProfileModel(const wl::Workload& workload, const wl::WorkloadCosts& costs,
               const MeasuredProfile& profile, const GpuSpec& gpu, const AnalyticParams& params)
      : name_("profile " + profile.origin.file),
        analytic_(workload, costs, gpu, params) {
    check_arguments(workload, costs);
    if (profile.workload != workload.name) {
      throw ConfigError(profile.origin,
                        fmt::format("profile is of workload '{}', not '{}' (use a profile "
                                    "measured on {}, or the analytic model)",
                                    profile.workload, workload.name, workload.name));
    }
    // MeasuredProfile::find searches linearly; one single-layer profile per workload layer
    // keeps each lookup constant-time (ResNet-152 has ~500 layers, asked per batch).
    std::vector<std::string> missing;
    for (size_t i = 0; i < workload.layers.size(); ++i) {
      const wl::Layer& layer = workload.layers[i];
      MeasuredProfile one;
      one.origin = profile.origin;
      one.workload = profile.workload;
      const auto passes = passes_of(layer, costs.layers[i]);
      passes_.push_back(passes);
      if (passes[kForward]) {
        if (const LayerProfile* measured = profile.find(layer.name)) {
          one.layers.push_back(*measured);
        } else {
          missing.push_back(layer.name);
        }
      }
      by_layer_.push_back(std::move(one));
    }
    if (!missing.empty()) {
      throw ConfigError(profile.origin,
                        fmt::format("profile of {} has no times for {} of its layers, first '{}' "
                                    "(measure every layer with the calibration tool, or use the "
                                    "analytic model)",
                                    workload.name, missing.size(), missing.front()));
    }
  }

  std::string name() const override { return name_; }

  LayerTimes layer_times(int layer, int batch) const override {
    if (layer < 0 || static_cast<size_t>(layer) >= by_layer_.size()) {
      throw std::out_of_range(fmt::format("layer {} of a workload of {}", layer,
                                          by_layer_.size()));
    }
    if (batch < 1) throw std::invalid_argument("batch size must be >= 1");
    const MeasuredProfile& one = by_layer_[static_cast<size_t>(layer)];
    const auto& passes = passes_[static_cast<size_t>(layer)];
    std::array<double, kTrainingPassCount> t{};
    for (int p = 0; p < kTrainingPassCount; ++p) {
      if (passes[p]) {
        t[p] = one.time(one.layers.front().name, static_cast<TrainingPass>(p), batch).value;
      }
    }
    return to_layer_times(t);
  }

  Seconds reduction_time(double bytes) const override { return analytic_.reduction_time(bytes); }
  Seconds update_time(long elements) const override { return analytic_.update_time(elements); }

 private:
  std::string name_;
  AnalyticModel analytic_;
  std::vector<MeasuredProfile> by_layer_;  // parallel to Workload::layers; empty for the input
  std::vector<std::array<bool, kTrainingPassCount>> passes_;
};

}  // namespace

std::unique_ptr<ComputeTimeModel> make_analytic_model(const wl::Workload& workload,
                                                      const wl::WorkloadCosts& costs,
                                                      const GpuSpec& gpu,
                                                      const AnalyticParams& params) {
  return std::make_unique<AnalyticModel>(workload, costs, gpu, params);
}

std::unique_ptr<ComputeTimeModel> make_profile_model(const wl::Workload& workload,
                                                     const wl::WorkloadCosts& costs,
                                                     const MeasuredProfile& profile,
                                                     const GpuSpec& gpu,
                                                     const AnalyticParams& params) {
  return std::make_unique<ProfileModel>(workload, costs, profile, gpu, params);
}

}  // namespace gpuscale::compute
