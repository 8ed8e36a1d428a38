// The two compute-time models behind compute_model.hpp.
//
// Analytic: each pass of each layer is a short list of kernels (layer_kernels.hpp), timed by
// analytic_layer_time (roofline per kernel + launch overhead per kernel + framework overhead
// once per pass). A pass the layer does not have costs 0 and pays no overhead.
//
// Profile: the measured time of each pass, looked up by layer name; when the profile was
// measured on another GPU than the one simulated, carried to it by projection.hpp with the work
// of the same kernels. Reductions and updates from the analytic model on the simulated GPU.
#include "sim/compute/compute_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "sim/compute/layer_kernels.hpp"
#include "sim/compute/projection.hpp"
#include "topologies/core/config_reader.hpp"
#include "workloads/src/transformer_layers.hpp"

namespace gpuscale::compute {
namespace {

// The arithmetic a recipe's math runs on `gpu`: FP16 uses Tensor Cores where there are some
// (cuDNN and cuBLAS pick them for FP16 data since CUDA 9), CUDA-core FP16 elsewhere; TF32, BF16
// and FP8 exist only as Tensor Core modes, and a GPU without one fails on its first kernel.
Precision kernel_precision(wl::Math math, const GpuSpec& gpu) {
  switch (math) {
    case wl::Math::fp32: return Precision::fp32;
    case wl::Math::fp16: return gpu.peak_tensor ? Precision::tensor : Precision::fp16;
    case wl::Math::tf32: return Precision::tf32;
    case wl::Math::bf16: return Precision::bf16;
    case wl::Math::fp8: return Precision::fp8;
  }
  throw std::logic_error("kernel_precision");
}

bool is_gemm_layer(const LayerPlan& plan) {
  using M = LayerPlan::Mapping;
  return plan.mapping == M::conv || plan.mapping == M::fc || plan.mapping == M::attention ||
         plan.mapping == M::lstm;
}

// The dtype a recipe's 16-bit layers write: BF16 where its GEMMs run in BF16 (or in FP8 with
// BF16 around them), else FP16.
Precision sixteen_bit_of(const wl::PrecisionRecipe& recipe) {
  const bool bf16 = recipe.gemm_math == wl::Math::bf16 ||
                    (recipe.gemm_math == wl::Math::fp8 && recipe.outside_math == wl::Math::bf16);
  return bf16 ? Precision::bf16 : Precision::fp16;
}

// What each layer runs at under `recipe`: a GEMM layer at the recipe's math for it (which may
// depend on whether it is in a transformer layer); any other layer is memory-bound and runs on
// CUDA cores at the dtype it writes.
std::vector<Precision> layer_precisions(const wl::Workload& workload,
                                        const std::vector<LayerPlan>& plans,
                                        const wl::PrecisionRecipe& recipe,
                                        const wl::TransformerLayers& blocks, const GpuSpec& gpu) {
  std::vector<Precision> out;
  for (size_t i = 0; i < plans.size(); ++i) {
    const wl::LayerType type = workload.layers[i].type;
    if (is_gemm_layer(plans[i])) {
      out.push_back(kernel_precision(recipe.math_of(type, blocks.contains(i)), gpu));
    } else {
      out.push_back(recipe.output_bytes_of(type) == 4 ? Precision::fp32 : sixteen_bit_of(recipe));
    }
  }
  return out;
}

std::vector<double> cast_elements(const wl::Workload& workload, const wl::PrecisionRecipe& recipe,
                                  const wl::TransformerLayers& blocks) {
  std::vector<double> out;
  for (size_t i = 0; i < workload.layers.size(); ++i) {
    out.push_back(wl::cast_weight_elements(workload.layers[i], recipe, blocks.contains(i)));
  }
  return out;
}

void check_layer(int layer, int batch, std::size_t layers) {
  if (layer < 0 || static_cast<size_t>(layer) >= layers) {
    throw std::out_of_range(fmt::format("layer {} of a workload of {}", layer, layers));
  }
  if (batch < 1) throw std::invalid_argument("batch size must be >= 1");
}

class AnalyticModel final : public ComputeTimeModel {
 public:
  AnalyticModel(const wl::Workload& workload, const wl::WorkloadCosts& costs, const GpuSpec& gpu,
                const AnalyticParams& params, const ConvAlgorithmPolicy& policy,
                const wl::PrecisionRecipe& recipe)
      : gpu_(gpu),
        params_(params),
        policy_(policy),
        recipe_(recipe),
        plans_(plan_layers(workload, costs)),
        blocks_(wl::transformer_layers(workload)),
        precisions_(layer_precisions(workload, plans_, recipe, blocks_, gpu)),
        cast_elements_(cast_elements(workload, recipe, blocks_)) {
    for (const wl::Layer& layer : workload.layers) {
      input_elements_.push_back(static_cast<double>(layer.input.elements()));
      output_elements_.push_back(static_cast<double>(layer.output.elements()));
    }
    // A GPU without a precision the recipe runs fails here, not mid-replay.
    for (Precision p : precisions_) gpu_.peak(p);
  }

  std::string name() const override { return "analytic " + gpu_.name; }

  // The layer's kernels, a convolution's by the algorithm the policy picks, plus the framework
  // overhead once.
  PassPlan pass_plan(int layer, TrainingPass pass, int batch) const override {
    check_layer(layer, batch, plans_.size());
    const auto index = static_cast<size_t>(layer);
    const LayerPlan& plan = plans_[index];
    if (!plan.has(pass)) return {};
    const Precision precision = precisions_[index];
    PassPlan out;
    out.precision = precision;
    const auto kernels = kernels_of(plan, pass, batch, precision);  // outlives the loop
    // No kernel, no operator: a gradient handed on as it is costs nothing.
    if (kernels.kernels().empty()) return out;
    double total = params_.framework_overhead.value;
    for (const KernelWork& k : kernels.kernels()) {
      if (k.kind != conv_kernel_class(pass)) {  // a GEMM or a streaming kernel (a conv's bias)
        total += analytic_kernel_time(gpu_, params_, k, precision).value;
        continue;
      }
      ConvShape shape = plan.conv;
      shape.batch = batch;
      const ConvChoice choice = choose_conv_algorithm(gpu_, params_.conv, params_.launch_overhead,
                                                      shape, pass, precision, policy_);
      total += choice.time.value;
      out.algorithm = to_string(choice.algorithm);
      out.workspace_bytes = choice.workspace_bytes;
    }
    if (const std::optional<KernelWork> cast = weight_cast(index, pass)) {
      out.weight_cast_time = analytic_kernel_time(gpu_, params_, *cast, Precision::fp32);
    }
    out.cast_time = out.weight_cast_time;
    if (const std::optional<KernelWork> cast = activation_cast(index, pass, batch)) {
      out.cast_time.value += analytic_kernel_time(gpu_, params_, *cast, Precision::fp32).value;
    }
    total += out.cast_time.value;
    out.time = {total};
    return out;
  }

  // A sum of two gradient inputs into one output, at the dtype the exchange carries: 3 elements
  // moved per addition.
  Seconds reduction_time(double bytes) const override {
    if (bytes < 0) throw std::invalid_argument("reduction of negative bytes");
    if (bytes == 0) return {0};
    const KernelWork sum{KernelClass::elementwise, bytes / recipe_.gradient_bytes / 3, bytes};
    return analytic_kernel_time(gpu_, params_, sum,
                                recipe_.gradient_bytes == 4 ? Precision::fp32 : Precision::fp16);
  }

  // The optimizer step of one parameter tensor as the recipe runs it: SGD with momentum
  // (m = mu m - lr g, w += m: 4 FLOPs per parameter), the recipe's bytes per parameter (the
  // update's reads and writes, plus unscaling and master-weight copies) over its kernels per
  // tensor. Plus the framework overhead once: one optimizer operator per key.
  Seconds update_time(long elements) const override {
    if (elements < 0) throw std::invalid_argument("update of a negative number of elements");
    if (elements == 0) return {0};
    const double n = static_cast<double>(elements);
    const int kernels = recipe_.update_kernels_per_tensor;
    const KernelWork part{KernelClass::elementwise, 4 * n / kernels,
                          recipe_.update_bytes_per_param * n / kernels};
    const std::vector<KernelWork> step(static_cast<size_t>(kernels), part);
    return analytic_layer_time(gpu_, params_, step, Precision::fp32);
  }

 private:
  // The recipe's weight casts in a pass of a layer. Autocast's: FP32 to 16 bits in forward
  // (4 bytes read, 2 written per element) and the 16-bit weight gradient back to FP32 in
  // backward-weights (2 read, 4 written). Transformer Engine's FP8 weight cast with its
  // transpose (2 read, 1 + 1 written), counted in every forward: `train` keeps it for the first
  // micro-batch (sim/parallel/train_job.cpp).
  std::optional<KernelWork> weight_cast(size_t layer, TrainingPass pass) const {
    const double n = cast_elements_[layer];
    const bool per_forward = recipe_.weight_casts == wl::WeightCasts::per_forward;
    if (n == 0 || pass == TrainingPass::backward_data) return std::nullopt;
    if (pass == TrainingPass::forward) {
      return KernelWork{KernelClass::elementwise, n, (per_forward ? 6 : 4) * n};
    }
    if (per_forward) return KernelWork{KernelClass::elementwise, n, 6 * n};
    return std::nullopt;
  }

  // An FP8 layer's cast of its input (with transpose) in forward and of its output gradient in
  // backward-data at batch b: 2 bytes read, 1 + 1 written per element.
  std::optional<KernelWork> activation_cast(size_t layer, TrainingPass pass, int batch) const {
    if (!recipe_.activation_casts || precisions_[layer] != Precision::fp8) return std::nullopt;
    const double per_sample = pass == TrainingPass::forward         ? input_elements_[layer]
                              : pass == TrainingPass::backward_data ? output_elements_[layer]
                                                                    : 0;
    if (per_sample == 0) return std::nullopt;
    const double n = batch * per_sample;
    return KernelWork{KernelClass::elementwise, n, 4 * n};
  }

  GpuSpec gpu_;
  AnalyticParams params_;
  ConvAlgorithmPolicy policy_;
  wl::PrecisionRecipe recipe_;
  std::vector<LayerPlan> plans_;         // parallel to Workload::layers
  wl::TransformerLayers blocks_;
  std::vector<Precision> precisions_;    // parallel to Workload::layers
  std::vector<double> cast_elements_;    // parallel to Workload::layers
  std::vector<double> input_elements_;   // per sample, parallel to Workload::layers
  std::vector<double> output_elements_;  // per sample, parallel to Workload::layers
};

// The GPU a profile was measured on, to project from: its spec must ship, else a ConfigError at
// the profile's `gpu:` line.
GpuSpec measured_gpu(const MeasuredProfile& profile, const GpuSpec& target) {
  const std::string& model = profile.header.gpu;
  const std::vector<std::string> shipped = shipped_gpus().names();
  if (std::find(shipped.begin(), shipped.end(), gpu_model_key(model)) == shipped.end()) {
    const Origin& at =
        profile.header.gpu_origin.file.empty() ? profile.origin : profile.header.gpu_origin;
    throw ConfigError(at, fmt::format("the profile was measured on GPU '{}', which has no spec to "
                                      "project its times to {} from (shipped: {}; add {}/{}.yaml, "
                                      "or use a profile measured on {})",
                                      model, target.name, fmt::join(shipped, ", "),
                                      shipped_gpus().dir(), gpu_model_key(model), target.name));
  }
  return load_gpu_spec(model);
}

// Every layer the profile times is a layer of the workload: a misspelt name would otherwise be
// ignored, and the layer it meant reported as missing. The hint prefers the layers the profile
// lacks, which a misspelt name most likely stands for ('fc3' for a missing 'fc2', not 'fc1').
void check_layers_known(const MeasuredProfile& profile, const wl::Workload& workload) {
  std::vector<std::string> names;
  std::vector<std::string> unmeasured;
  for (const wl::Layer& layer : workload.layers) {
    names.push_back(layer.name);
    if (profile.find(layer.name) == nullptr) unmeasured.push_back(layer.name);
  }
  for (const LayerProfile& measured : profile.layers) {
    if (std::find(names.begin(), names.end(), measured.name) != names.end()) continue;
    const bool near_unmeasured = nearest_name(measured.name, unmeasured).has_value();
    throw ConfigError(measured.origin,
                      fmt::format("profile layer '{}' is no layer of {} ({})", measured.name,
                                  workload.name,
                                  name_hint(measured.name, near_unmeasured ? unmeasured : names)));
  }
}

class ProfileModel final : public ComputeTimeModel {
 public:
  ProfileModel(const wl::Workload& workload, const wl::WorkloadCosts& costs,
               const MeasuredProfile& profile, const GpuSpec& gpu, const AnalyticParams& params,
               const ConvAlgorithmPolicy& policy, const wl::PrecisionRecipe& recipe)
      : name_("profile " + profile.origin.file),
        analytic_(workload, costs, gpu, params, policy, recipe),
        plans_(plan_layers(workload, costs)),
        precision_(profile.precision) {
    if (profile.workload != workload.name) {
      throw ConfigError(profile.workload_origin,
                        fmt::format("profile is of workload '{}', not '{}' (use a profile "
                                    "measured on {}, or the analytic model)",
                                    profile.workload, workload.name, workload.name));
    }
    // FP32 layers timed in FP32, FP16 ones in FP16 (on Tensor Cores or not): times of the other
    // precision would be off by the ratio of the two peaks.
    if ((profile.precision == Precision::fp32) != (workload.precision == wl::Precision::Fp32)) {
      throw ConfigError(profile.origin,
                        fmt::format("profile measured at precision {} for a workload in {} (use "
                                    "a profile of the workload's precision, or a workload file "
                                    "with that precision)",
                                    to_string(profile.precision),
                                    wl::to_string(workload.precision)));
    }
    check_layers_known(profile, workload);
    // MeasuredProfile::find searches linearly; the layers in workload order keep each lookup
    // constant-time (ResNet-152 has ~500 layers, asked per batch).
    std::vector<std::string> missing;
    by_layer_.resize(workload.layers.size());
    for (size_t i = 0; i < workload.layers.size(); ++i) {
      if (!plans_[i].has(TrainingPass::forward)) continue;
      if (const LayerProfile* measured = profile.find(workload.layers[i].name)) {
        by_layer_[i] = *measured;
      } else {
        missing.push_back(workload.layers[i].name);
      }
    }
    if (!missing.empty()) {
      throw ConfigError(profile.layers_origin,
                        fmt::format("profile of {} has no times for {} of its layers, first '{}' "
                                    "(measure every layer with the calibration tool, or use the "
                                    "analytic model)",
                                    workload.name, missing.size(), missing.front()));
    }
    if (gpu_model_key(profile.header.gpu) != gpu_model_key(gpu.name)) {
      // The measured launch overhead where the file has one: it is the fixed cost of the GPU
      // and driver that ran the profile.
      const Seconds from_launch = profile.header.microbenchmarks
                                      ? profile.header.microbenchmarks->launch_overhead
                                      : params.launch_overhead;
      projection_.emplace(Projection{{measured_gpu(profile, gpu), from_launch},
                                     {gpu, params.launch_overhead}});
      projection_->from.gpu.peak(precision_);  // a GPU without the precision fails here
      projection_->to.gpu.peak(precision_);
      name_ += fmt::format(" (measured on {}, projected to {})", profile.header.gpu, gpu.name);
    }
  }

  std::string name() const override { return name_; }

  // The measured time, plus the recipe's weight casts, which a profile of the layer's own
  // kernels does not hold.
  PassPlan pass_plan(int layer, TrainingPass pass, int batch) const override {
    PassPlan plan = analytic_.pass_plan(layer, pass, batch);
    plan.time = {measured_time(layer, pass, batch).value + plan.cast_time.value};
    return plan;
  }

  // Analytic on the simulated GPU even when the profile holds microbenchmarks: a reduction or
  // an update is one kernel whose launch the analytic constant (a library call's fixed cost)
  // describes, not the measured empty-kernel launch, and the model's copy bandwidth is the
  // GPU spec's whether or not the profile's GPU is the one simulated.
  Seconds reduction_time(double bytes) const override { return analytic_.reduction_time(bytes); }
  Seconds update_time(long elements) const override { return analytic_.update_time(elements); }

 private:
  Seconds measured_time(int layer, TrainingPass pass, int batch) const {
    check_layer(layer, batch, by_layer_.size());
    const LayerPlan& plan = plans_[static_cast<size_t>(layer)];
    if (!plan.has(pass)) return {0};
    const Seconds measured = by_layer_[static_cast<size_t>(layer)].time(pass, batch);
    if (!projection_) return measured;
    return project_time(measured, kernels_of(plan, pass, batch, precision_).kernels(), precision_,
                        projection_->from, projection_->to);
  }

  struct Projection {
    ProjectionEnd from;  // the GPU the profile was measured on
    ProjectionEnd to;    // the GPU simulated
  };

  std::string name_;
  AnalyticModel analytic_;
  std::vector<LayerPlan> plans_;           // parallel to Workload::layers
  Precision precision_;                    // the profile's
  // Parallel to Workload::layers; empty (never asked) for a layer without passes: the input.
  std::vector<LayerProfile> by_layer_;
  std::optional<Projection> projection_;   // when the profile's GPU is not the one simulated
};

}  // namespace

LayerTimes ComputeTimeModel::layer_times(int layer, int batch) const {
  const auto time = [&](TrainingPass pass) { return pass_plan(layer, pass, batch).time; };
  return {time(TrainingPass::forward), time(TrainingPass::backward_data),
          time(TrainingPass::backward_weights)};
}

double largest_workspace_bytes(const ComputeTimeModel& model, const wl::Workload& workload,
                               int batch) {
  double largest = 0;
  for (int layer = 0; layer < static_cast<int>(workload.layers.size()); ++layer) {
    for (int p = 0; p < kTrainingPassCount; ++p) {
      const auto pass = static_cast<TrainingPass>(p);
      largest = std::max(largest, model.pass_plan(layer, pass, batch).workspace_bytes);
    }
  }
  return largest;
}

std::unique_ptr<ComputeTimeModel> make_analytic_model(const wl::Workload& workload,
                                                      const wl::WorkloadCosts& costs,
                                                      const GpuSpec& gpu,
                                                      const AnalyticParams& params,
                                                      const ConvAlgorithmPolicy& policy,
                                                      const wl::PrecisionRecipe& recipe) {
  return std::make_unique<AnalyticModel>(workload, costs, gpu, params, policy, recipe);
}

std::unique_ptr<ComputeTimeModel> make_profile_model(const wl::Workload& workload,
                                                     const wl::WorkloadCosts& costs,
                                                     const MeasuredProfile& profile,
                                                     const GpuSpec& gpu,
                                                     const AnalyticParams& params,
                                                     const ConvAlgorithmPolicy& policy,
                                                     const wl::PrecisionRecipe& recipe) {
  return std::make_unique<ProfileModel>(workload, costs, profile, gpu, params, policy, recipe);
}

}  // namespace gpuscale::compute
