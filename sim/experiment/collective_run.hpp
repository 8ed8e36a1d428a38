// One collective (or one copy) simulated alone on a machine: what `gpuscale collective` prints
// and what the tests compare with closed forms. Creates the SimGrid engine: once per process
// (wrap in run_isolated).
#pragma once

#include <string>
#include <vector>

#include "sim/collectives/request.hpp"
#include "sim/engine/lock_step.hpp"
#include "topologies/src/routing.hpp"

namespace gpuscale::sim {

struct CollectiveRun {
  double seconds = 0;
  long activities = 0;
  // The protocol that ran; for nccl_auto "algorithm/protocol (NCCL version)", NCCL's choice;
  // "-" for a schedule that follows none (coll::follows_nccl_protocol).
  std::string protocol;
};

// `algorithm` is a registry name over the ranks `gpus` (device indices), channel `rings` over
// ranks (empty: rank order), NCCL `protocol` by name ("simple", "ideal", ...), `kind` the
// collective (its size `bytes` as request.hpp counts it; root 0). Reductions take
// bytes / `reduce_bandwidth_Bps` of GPU time (0: free).
CollectiveRun simulate_collective(const topo::Topology& topology, const topo::Router& router,
                                  const std::vector<int>& gpus,
                                  const std::vector<std::vector<int>>& rings,
                                  const std::vector<int>& node_of_rank,
                                  const std::string& algorithm, double bytes,
                                  const std::string& protocol, double reduce_bandwidth_Bps,
                                  coll::Collective kind = coll::Collective::AllReduce,
                                  FlowDetail detail = FlowDetail::AsReplayed);

// Why a collective `algorithm` of `kind` over `ranks` ranks is slow to simulate: where a
// schedule it runs is not lock-step at that count (MPICH's recursive doubling and Rabenseifner
// off a power of two, binomial trees: sim/engine/lock_step.hpp), its flows run one by one,
// thousands at once that SimGrid re-solves at every completion. A ResNet-50 DDP run by recursive
// doubling on 2,000 of Lassen's GPUs took 16 s, on 3,000 some 3 minutes, and one 25 MiB
// allreduce 0.9 s and 9 s (docs/collectives.md, "Lock-step schedules at scale"), so it is said
// above 2,048 ranks. Empty otherwise: every other schedule is evaluated from link loads there.
std::string flow_by_flow_reason(const std::string& algorithm, coll::Collective kind, int ranks);

// One copy of `bytes` from GPU `src` to GPU `dst` along its route (legs store-and-forward).
double simulate_copy(const topo::Topology& topology, const topo::Router& router, int src, int dst,
                     double bytes);

}  // namespace gpuscale::sim
