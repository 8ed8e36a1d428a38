#include "sim/experiment/collective_job.hpp"

#include <fmt/format.h>

#include "sim/collectives/registry.hpp"
#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"
#include "sim/engine/isolated.hpp"
#include "sim/exchange/exchange_choice.hpp"
#include "sim/experiment/collective_result_codec.hpp"
#include "sim/experiment/collective_run.hpp"
#include "sim/experiment/machine_setup.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::sim {
namespace {

// In the child process.
CollectiveJobResult simulate(const CollectiveJob& job, const std::string& algorithm) {
  const topo::Topology machine = machine_for(job.topology, job.topology_overrides, job.gpus);
  const Placement placement = place_job(machine, job.gpus);
  const topo::Router router(machine, machine.default_routing());
  const CollectiveRun run = simulate_collective(
      machine, router, placement.gpus, placement.rings, placement.node_of_rank, algorithm,
      job.bytes, job.protocol, reduce_bandwidth_Bps(machine.devices()[placement.gpus[0]].model),
      job.collective);
  return {machine.name(), run.protocol, run.seconds, run.activities};
}

// Names the comm methods (`nccl`, not the registry's `nccl_ring`) that implement `kind`.
void check_implements(const std::string& comm, const std::string& algorithm,
                      coll::Collective kind) {
  if (coll::implements(coll::find_algorithm(algorithm), kind)) return;
  std::vector<std::string> methods;
  for (const std::string& method : comm_alias_names()) {
    if (coll::implements(coll::find_algorithm(algorithm_of_alias(method)), kind)) {
      methods.push_back(method);
    }
  }
  throw ConfigError({}, fmt::format("comm method '{}' does not implement {} (methods that do: {})",
                                    comm, coll::to_string(kind), fmt::join(methods, ", ")));
}

}  // namespace

double reduce_bandwidth_Bps(const std::string& gpu_model) {
  const compute::GpuSpec gpu = compute::load_gpu_spec(gpu_model);
  const compute::AnalyticParams params =
      compute::load_analytic_params(compute::shipped_analytic_params_path());
  return gpu.copy_bandwidth().value * params.memory(compute::KernelClass::elementwise);
}

CollectiveJobResult run_collective_job(const CollectiveJob& job) {
  const std::string algorithm = algorithm_of_alias(job.comm);  // an unknown name fails first
  check_implements(job.comm, algorithm, job.collective);
  return run_isolated_as([&] { return simulate(job, algorithm); });
}

}  // namespace gpuscale::sim
