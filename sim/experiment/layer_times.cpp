#include "sim/experiment/layer_times.hpp"

#include <fmt/format.h>

#include "sim/experiment/compute_setup.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/workload_at_precision.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::sim {

using compute::TrainingPass;

const compute::PassPlan* LayerTimes::plan_of(TrainingPass pass) const {
  for (const LayerPassTime& p : passes) {
    if (p.pass == pass) return &p.plan;
  }
  return nullptr;
}

namespace {

std::vector<TrainingPass> passes_of(const wl::LayerCost& cost) {
  std::vector<TrainingPass> passes = {TrainingPass::forward};
  if (cost.has_backward_data) passes.push_back(TrainingPass::backward_data);
  if (cost.has_backward_weights) passes.push_back(TrainingPass::backward_weights);
  return passes;
}

}  // namespace

LayerTimesReport layer_times_of(const LayerTimesRequest& request) {
  const wl::Workload w = wl::load_workload_at(request.model, request.precision,
                                              Origin{"--precision", 0}, request.overrides);
  const wl::WorkloadCosts costs = wl::compute_costs(w);
  const wl::FrameworkConfig framework = wl::load_framework(
      wl::framework_for(request.model, request.framework, request.overrides),
      Origin{"--framework", 0});
  const compute::GpuSpec gpu = compute::load_gpu_spec(request.gpu, Origin{"--gpu", 0});
  const auto model = compute_model_of(w, costs, framework, gpu, request.profile);
  const wl::PrecisionRecipe& recipe = framework.precision_of(w);
  LayerTimesReport report{.workload = w.name,
                          .gpu = request.gpu,
                          .framework = framework.name,
                          .model = model->name(),
                          .precision = fmt::format("{} ({})", recipe.name, recipe.runs_as),
                          .batch = request.batch};
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const wl::Layer& layer = w.layers[i];
    if (layer.type == wl::LayerType::Input) continue;  // the batch itself: no kernel runs
    LayerTimes row{.name = layer.name,
                   .type = wl::to_string(layer.type),
                   .output_elements = layer.output.elements(),
                   .params = costs.layers[i].params};
    for (TrainingPass pass : passes_of(costs.layers[i])) {
      const compute::PassPlan plan = model->pass_plan(static_cast<int>(i), pass, request.batch);
      report.total_us[static_cast<size_t>(pass)] += plan.time.value * 1e6;
      report.casts = report.casts || plan.cast_time.value > 0;
      row.passes.push_back({pass, plan});
    }
    report.layers.push_back(std::move(row));
  }
  return report;
}

}  // namespace gpuscale::sim
