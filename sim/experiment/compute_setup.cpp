#include "sim/experiment/compute_setup.hpp"

#include "sim/compute/profile.hpp"

namespace gpuscale::sim {
namespace {

compute::ConvAlgorithmPolicy conv_policy_of(const wl::FrameworkConfig& framework) {
  return {framework.execution.cudnn_autotune, framework.workspace_limit.value};
}

}  // namespace

std::shared_ptr<const compute::ComputeTimeModel> compute_model_of(
    const wl::Workload& workload, const wl::WorkloadCosts& costs,
    const wl::FrameworkConfig& framework, const compute::GpuSpec& gpu,
    const std::string& profile) {
  const compute::AnalyticParams params =
      compute::load_analytic_params(compute::shipped_analytic_params_path());
  const compute::ConvAlgorithmPolicy policy = conv_policy_of(framework);
  const wl::PrecisionRecipe& recipe = framework.precision_of(workload);
  if (profile.empty()) {
    return compute::make_analytic_model(workload, costs, gpu, params, policy, recipe);
  }
  return compute::make_profile_model(workload, costs, compute::load_profile(profile), gpu, params,
                                     policy, recipe);
}

std::function<double(int)> workspace_of(std::shared_ptr<const compute::ComputeTimeModel> model,
                                        const wl::Workload& workload) {
  return [model = std::move(model), w = std::make_shared<const wl::Workload>(workload)](int batch) {
    return compute::largest_workspace_bytes(*model, *w, batch);
  };
}

}  // namespace gpuscale::sim
