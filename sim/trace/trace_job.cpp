#include "sim/trace/trace_job.hpp"

#include <chrono>

#include "sim/engine/isolated.hpp"
#include "sim/exchange/exchange_choice.hpp"
#include "sim/experiment/collective_job.hpp"
#include "sim/replay/replay.hpp"
#include "sim/trace/trace_result_codec.hpp"

namespace gpuscale::sim {
namespace {

// In the child: the replayed iteration.
TraceJobResult simulate(const interop::TraceGraph& graph, const TraceJob& job,
                        const std::string& algorithm) {
  const auto wall_start = std::chrono::steady_clock::now();
  const topo::Topology machine = machine_for(job.topology, job.topology_overrides, job.gpus);
  const topo::Router router(machine, machine.default_routing());
  TraceMachine m;
  m.machine = &machine;
  m.router = &router;
  m.placement = place_job(machine, job.gpus);
  m.algorithm = algorithm;
  m.protocol = job.protocol;
  TraceJobResult result;
  result.topology = machine.name();
  result.gpu = machine.devices()[static_cast<size_t>(m.placement.gpus[0])].model;
  m.reduce_bandwidth_Bps = reduce_bandwidth_Bps(result.gpu);  // as `gpuscale collective` charges it
  result.replay = replay_trace(graph, m);
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace

TraceJobResult run_trace_job(const interop::TraceGraph& graph, const TraceJob& job) {
  const std::string algorithm = algorithm_of_alias(job.comm);  // an unknown name fails first
  return run_isolated_as([&] { return simulate(graph, job, algorithm); });
}

}  // namespace gpuscale::sim
