#include "sim/experiment/collective_run.hpp"

#include <fmt/format.h>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay.hpp"

namespace gpuscale::sim {
namespace {

// Runs `schedule` over ranks `gpus` on a platform of just the legs it needs: none, where its
// depths are evaluated from their link loads, its reductions then running on rank 0's GPU.
CollectiveRun run_schedule(const topo::Topology& topology, const topo::Router& router,
                           const std::vector<int>& gpus, const coll::Schedule& schedule,
                           double reduce_bandwidth_Bps, FlowDetail detail) {
  const bool from_link_loads = detail == FlowDetail::AsReplayed &&
                               evaluated_from_link_loads(schedule, static_cast<int>(gpus.size()));
  PlatformNeeds needs;
  if (from_link_loads) {
    needs.hosts.push_back(gpus.front());
  } else {
    needs.add(schedule, router, gpus);
  }
  Simulation sim(topology, router, gpus, needs, reduction_at(reduce_bandwidth_Bps));
  if (from_link_loads) {
    sim.append_lock_step(schedule, -1, 0);
  } else {
    sim.append(schedule, -1);
  }
  const double seconds = sim.run();
  return {seconds, sim.dag().activities_started(), {}};
}

}  // namespace

CollectiveRun simulate_collective(const topo::Topology& topology, const topo::Router& router,
                                  const std::vector<int>& gpus,
                                  const std::vector<std::vector<int>>& rings,
                                  const std::vector<int>& node_of_rank,
                                  const std::string& algorithm, double bytes,
                                  const std::string& protocol, double reduce_bandwidth_Bps,
                                  coll::Collective kind, FlowDetail detail) {
  coll::CollectiveRequest request;
  request.kind = kind;
  request.bytes = bytes;
  request.ranks = static_cast<int>(gpus.size());
  request.rings = rings;
  request.node_of_rank = node_of_rank;
  ProtocolChoice(topology, router, gpus, rings, node_of_rank, protocol).fill(request);
  CollectiveRun run = run_schedule(topology, router, gpus, coll::build_schedule(algorithm, request),
                                   reduce_bandwidth_Bps, detail);
  run.protocol = coll::follows_nccl_protocol(algorithm, bytes, request.ranks)
                     ? request.protocol.name
                     : "-";
  if (algorithm == "nccl_auto" && request.ranks > 1 && bytes > 0) {
    const coll::NcclChoice choice = coll::nccl_auto_choice(request);
    const std::string protocol_ran = request.nccl_chooses_protocol
                                         ? coll::nccl_protocol(choice.protocol).name
                                         : request.protocol.name;
    run.protocol = fmt::format("{}/{} (NCCL {})", coll::to_string(choice.algorithm), protocol_ran,
                               coll::to_string(request.nccl->version));
  }
  return run;
}

std::string flow_by_flow_reason(const std::string& algorithm, coll::Collective kind, int ranks) {
  constexpr int kFlowByFlowUpToRanks = 2048;  // measured: collective_run.hpp
  // One that does not implement `kind` is the job's error to report, not a warning.
  if (ranks <= kFlowByFlowUpToRanks ||
      !coll::implements(coll::find_algorithm(algorithm), kind)) {
    return "";
  }
  // The schedules it runs (nccl_auto's and aluminum's choices among others), each as a bare
  // request gives it: whether a schedule is lock-step depends on its rank count alone.
  coll::CollectiveRequest request;
  request.kind = kind;
  request.bytes = 1e6;
  request.ranks = ranks;
  for (const std::string& ran : coll::algorithms_run_by(algorithm)) {
    if (coll::build_schedule(ran, request).lock_step) continue;
    return fmt::format("is simulated flow by flow, which takes seconds to minutes: {}'s rounds "
                       "are not in lock step over {} ranks, and SimGrid re-solves thousands of "
                       "flows at every completion; ring, nccl, binomial_tree, and recursive "
                       "doubling over a power of two GPUs are evaluated from link loads in about "
                       "a second",
                       ran, ranks);
  }
  return "";
}

double simulate_copy(const topo::Topology& topology, const topo::Router& router, int src, int dst,
                     double bytes) {
  coll::Schedule copy{"copy", 2, bytes, {}};
  coll::Op transfer;
  transfer.src = 0;
  transfer.dst = 1;
  transfer.bytes = bytes;
  copy.ops.push_back(transfer);
  return run_schedule(topology, router, {src, dst}, copy, 0, FlowDetail::EveryFlow).seconds;
}

}  // namespace gpuscale::sim
