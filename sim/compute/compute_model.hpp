// The compute-time model the replay asks: how long each pass of each layer of a workload takes on
// one GPU at a given per-GPU batch, and how long the gradient exchange's reductions and the
// weight updates take. Two implementations: measured profiles (profile.hpp) and the analytic
// roofline (kernel_time.hpp). docs/compute-model.md states the mapping from layers to kernels.
#pragma once

#include <memory>
#include <string>

#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"
#include "sim/compute/profile.hpp"
#include "topologies/core/units.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::compute {

// One pass as the model plans it: the time, the arithmetic it runs at, the part of the time
// spent casting weights (the precision recipe's), and for a convolution the algorithm and the
// workspace it needs.
struct PassPlan {
  Seconds time;
  Precision precision = Precision::fp32;
  Seconds cast_time;        // included in `time`: the recipe's cast kernels
  Seconds weight_cast_time; // the weight casts among them
  std::string algorithm;    // "implicit_gemm", "winograd"; empty for any other kernel
  double workspace_bytes = 0;
};

struct LayerTimes {
  Seconds forward;
  Seconds backward_data;     // 0 when the layer has no backward-data task
  Seconds backward_weights;  // 0 when the layer has no parameters
};

// Contract: deterministic; times >= 0; a layer without a backward pass (see
// wl::LayerCost::has_backward_*) gets 0 for it.
class ComputeTimeModel {
 public:
  virtual ~ComputeTimeModel() = default;
  // "analytic V100-SXM2", "profile FILE", "profile FILE (measured on X, projected to Y)"
  virtual std::string name() const = 0;
  // `layer` indexes Workload::layers (layer 0, the input, costs nothing): its passes' times
  // (pass_plan).
  LayerTimes layer_times(int layer, int batch) const;
  // The pass of `layer` with its convolution algorithm (a measured time's algorithm is the one
  // the analytic model would choose).
  virtual PassPlan pass_plan(int layer, TrainingPass pass, int batch) const = 0;

  // Summing gradients on a GPU: a streaming kernel moving `bytes` (inputs read + output written).
  virtual Seconds reduction_time(double bytes) const = 0;
  // The optimizer's update of one parameter tensor of `elements` elements, as the precision
  // recipe runs it (master weights, unscaling).
  virtual Seconds update_time(long elements) const = 0;
};

// The cuDNN workspace of the workload's largest convolution pass at `batch`, by the algorithms
// `model` plans: the framework's pooled allocator keeps one workspace the size of the largest
// it was asked for.
double largest_workspace_bytes(const ComputeTimeModel& model, const wl::Workload& workload,
                               int batch);

// The analytic model on `gpu` with the constants `params`; convolutions run the algorithm
// `policy` picks (the framework's autotuning setting and workspace limit); each layer runs at the
// precision `recipe` gives it, with its weight casts, and the optimizer step as `recipe` runs it.
// Throws ConfigError when the GPU lacks a precision the recipe runs.
std::unique_ptr<ComputeTimeModel> make_analytic_model(const wl::Workload& workload,
                                                      const wl::WorkloadCosts& costs,
                                                      const GpuSpec& gpu,
                                                      const AnalyticParams& params,
                                                      const ConvAlgorithmPolicy& policy,
                                                      const wl::PrecisionRecipe& recipe);

// Measured times per layer, projected to `gpu` (projection.hpp) when the profile was measured on
// another model; reductions and updates, which a profile does not hold, come from the analytic
// model on `gpu`. Throws ConfigError when the profile lacks a layer of the workload, names
// another workload, or must be projected from a GPU that has no spec file.
std::unique_ptr<ComputeTimeModel> make_profile_model(const wl::Workload& workload,
                                                     const wl::WorkloadCosts& costs,
                                                     const MeasuredProfile& profile,
                                                     const GpuSpec& gpu,
                                                     const AnalyticParams& params,
                                                     const ConvAlgorithmPolicy& policy,
                                                     const wl::PrecisionRecipe& recipe);

}  // namespace gpuscale::compute
