#include "sim/replay/replay_inputs.hpp"

#include "workloads/src/workload_loader.hpp"

namespace gpuscale::sim {
namespace {

std::unique_ptr<const compute::ComputeTimeModel> compute_model(const wl::Workload& w,
                                                               const wl::WorkloadCosts& costs,
                                                               const std::string& gpu_model,
                                                               const std::string& profile) {
  const compute::GpuSpec gpu = compute::load_gpu_spec(gpu_model);
  const compute::AnalyticParams params =
      compute::load_analytic_params(compute::shipped_analytic_params_path());
  if (profile.empty()) return compute::make_analytic_model(w, costs, gpu, params);
  return compute::make_profile_model(w, costs, compute::load_profile(profile), gpu, params);
}

}  // namespace

ReplayInputs::ReplayInputs(const Experiment& e, const Configuration& c)
    : machine(machine_for(e.topology, e.topology_overrides, c.gpus, e.topology_document)),
      placement(place_job(machine, c.gpus)),
      router(machine, topo::routing_mode_for(machine, e.routing)),
      workload(wl::load_workload(c.workload)),
      costs(wl::compute_costs(workload)),
      compute(compute_model(workload, costs, machine.devices()[placement.gpus[0]].model, e.profile)) {
  setup.topology = &machine;
  setup.router = &router;
  setup.gpus = placement.gpus;
  setup.rings = placement.rings;
  setup.node_of_rank = placement.node_of_rank;
  setup.workload = &workload;
  setup.costs = &costs;
  setup.compute = compute.get();
  setup.batch = c.batch;
  setup.comm = c.comm;
  setup.fusion_bytes = e.fusion_mb * 1e6;
  setup.fusion_cycle_s = e.fusion_cycle_ms * 1e-3;
  setup.protocol = e.protocol;
  setup.iterations = e.iterations;
  setup.record_timeline = e.record_timeline;
}

}  // namespace gpuscale::sim
