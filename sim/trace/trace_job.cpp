#include "sim/trace/trace_job.hpp"

#include <nlohmann/json.hpp>

#include <chrono>

#include "sim/engine/isolated.hpp"
#include "sim/exchange/exchange_choice.hpp"
#include "sim/experiment/collective_job.hpp"
#include "sim/replay/replay.hpp"

namespace gpuscale::sim {
namespace {

using nlohmann::json;

// In the child: the replayed iteration as JSON.
std::string simulate(const interop::TraceGraph& graph, const TraceJob& job,
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
  const std::string& gpu = machine.devices()[static_cast<size_t>(m.placement.gpus[0])].model;
  m.reduce_bandwidth_Bps = reduce_bandwidth_Bps(gpu);  // as `gpuscale collective` charges it
  const TraceResult r = replay_trace(graph, m);
  return json{{"topology", machine.name()},
              {"gpu", gpu},
              {"iteration_s", r.iteration_s},
              {"compute_s", r.compute_s},
              {"communication_s", r.communication_s},
              {"exposed_communication_s", r.exposed_communication_s},
              {"kernels", r.kernels},
              {"collectives", r.collectives},
              {"messages", r.messages},
              {"activities", r.activities},
              {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                       wall_start)
                             .count()}}
      .dump();
}

}  // namespace

TraceJobResult run_trace_job(const interop::TraceGraph& graph, const TraceJob& job) {
  const std::string algorithm = algorithm_of_alias(job.comm);  // an unknown name fails first
  const json j = json::parse(run_isolated([&] { return simulate(graph, job, algorithm); }));
  TraceJobResult out;
  out.topology = j["topology"];
  out.gpu = j["gpu"];
  out.replay.iteration_s = j["iteration_s"];
  out.replay.compute_s = j["compute_s"];
  out.replay.communication_s = j["communication_s"];
  out.replay.exposed_communication_s = j["exposed_communication_s"];
  out.replay.kernels = j["kernels"];
  out.replay.collectives = j["collectives"];
  out.replay.messages = j["messages"];
  out.replay.activities = j["activities"];
  out.wall_s = j["wall_s"];
  return out;
}

}  // namespace gpuscale::sim
