// hierarchical: the two-level allreduce of MPI libraries on clusters of multi-GPU nodes (as in
// MVAPICH2's two-level allreduce, SMPI "mvapich2_two_level"): inside each node a binomial reduce
// to the node's leader (its lowest rank), then the leaders' ring allreduce (ring.cpp's flow-level
// model, nodes in increasing id), then inside each node a binomial broadcast from the leader.
// Only the leaders touch the network, with a ring of n nodes instead of p ranks. With m ranks per
// node, K = ceil(log2 m), n nodes and no contention:
//   T = K (alpha + S/B + 3S/gamma)                                  intra-node reduce
//     + 2(n-1) alpha + 2(n-1)/n S/B + 3(n-1)/n S/gamma                leaders' ring
//     + K (alpha + S/B)                                             intra-node broadcast
// A zero-second Delay joins the node reductions before the ring starts (the ring's first step
// needs every leader). One node: reduce + broadcast; one rank per node: the ring.
// 3(p-n) ops inside the nodes, 3n + 1 for the leaders: at most 3p + 1. Lock-step where a job's
// nodes are alike (whole nodes, as jobs above one node are): every node's binomial rounds at
// one depth, then the leaders' ring as ring.cpp's.
#include "sim/collectives/algorithms.hpp"

namespace gpuscale::coll {

Schedule build_hierarchical(const CollectiveRequest& r) {
  ScheduleBuilder b("hierarchical", r);
  const auto groups = ranks_by_node(r);
  Ready ready(static_cast<std::size_t>(r.ranks));
  std::vector<int> leaders, leaders_reduced;
  for (const auto& group : groups) {
    binomial_reduce(b, group, 0, r.bytes, ready);
    leaders.push_back(group.front());
    const auto& done = ready[group.front()];
    leaders_reduced.insert(leaders_reduced.end(), done.begin(), done.end());
  }
  if (leaders.size() > 1) {
    mpi_ring_allreduce(b, leaders, r.bytes, b.gate(0, leaders_reduced), ready);
  }
  for (const auto& group : groups) binomial_broadcast(b, group, 0, r.bytes, ready);
  Schedule s = b.finish();
  s.lock_step = true;
  return s;
}

}  // namespace gpuscale::coll
