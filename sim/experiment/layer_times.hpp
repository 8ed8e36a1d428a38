// The predicted GPU time of each pass of each layer of a workload at a batch, as one GPU with a
// framework's convolution choices runs it: what `gpuscale workload layers` prints and what a
// per-layer validation suite (validation/src/layers_suite.hpp) compares with a profiler's rows.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "sim/compute/compute_model.hpp"

namespace gpuscale::sim {

struct LayerTimesRequest {
  std::string model;      // a shipped workload or a .yaml file
  int batch = 32;
  std::string framework{};  // empty: the model's own (wl::framework_for)
  std::string gpu = "V100-SXM2";
  std::string profile{};    // empty: the analytic model
  std::string precision{};  // empty: the workload's
  std::vector<std::string> overrides{};  // --set KEY.PATH=VALUE
};

struct LayerPassTime {
  compute::TrainingPass pass;
  compute::PassPlan plan;
};

struct LayerTimes {
  std::string name;  // Workload::layers[i].name, as the workload file names it
  std::string type;  // wl::to_string(LayerType)
  long output_elements = 0;  // per sample
  long params = 0;
  std::vector<LayerPassTime> passes{};  // the passes the layer has, forward first

  // The plan of `pass`, or null where the layer lacks it.
  const compute::PassPlan* plan_of(compute::TrainingPass pass) const;
};

struct LayerTimesReport {
  std::string workload;
  std::string gpu;
  std::string framework;
  std::string model;      // ComputeTimeModel::name(): analytic or which profile
  std::string precision;  // the recipe's name and what the framework runs for it
  bool casts = false;     // some pass casts weights (the recipe's extra kernels)
  int batch = 0;
  std::vector<LayerTimes> layers{};  // every layer but the input, in forward order
  std::array<double, compute::kTrainingPassCount> total_us{};  // indexed by TrainingPass
};

// Forward for every layer; a backward pass only where a gradient flows through the layer
// (wl::LayerCost::has_backward_*): the model gives a pass the layer lacks 0 s, which a user
// comparing with a profiler must not mistake for a kernel that takes no time. Throws
// ConfigError for a bad workload, framework, GPU, profile or precision, blaming the option.
LayerTimesReport layer_times_of(const LayerTimesRequest& request);

}  // namespace gpuscale::sim
