// ring: the MPI ring allreduce (Open MPI/MVAPICH2 ring, SMPI "lr"): a reduce-scatter in p-1 steps,
// each rank sending one block of S/p to its successor and summing the block it receives, then an
// allgather in p-1 steps. Ranks in rank order (an MPI library does not know the machine).
//
// Flow-level, not step-wise: step-wise is 2(p-1) p transfers, 523K at 512 ranks, and SimGrid
// replays ~0.5M transfers a second (docs/simgrid-notes), far too slow inside a training
// iteration of many collectives. Per ring edge one reduce-scatter flow of (p-1)/p S, the latency
// paid p-1 times; per rank one Reduce of its p-1 received blocks (memory traffic 3 (p-1)/p S);
// then per edge one allgather flow of (p-1)/p S after the sender's Reduce:
//   T = 2(p-1) alpha + 2(p-1)/p S/B + 3(p-1)/p S/gamma
// which is also the step-wise time when links differ without contention: every step waits for
// the slowest edge, and so does each flow. What it loses is the interleaving of reductions with
// transfers (they are serial here, as in a non-overlapping MPI implementation). 3p ops.
// Lock-step: each edge's gather takes its scatter's route and bytes, so the depths' slowest
// scatter, sum and gather make the slowest chain flow by flow too, wherever no early gather
// shares a link with a scatter still running (every shipped cluster, tests/sim/engine/
// test_lock_step.cpp); at scale the replay evaluates it from link loads.
#include "sim/collectives/algorithms.hpp"

namespace gpuscale::coll {

Schedule build_ring(const CollectiveRequest& r) {
  ScheduleBuilder b("ring", r);
  std::vector<int> order(static_cast<std::size_t>(r.ranks));
  for (int i = 0; i < r.ranks; ++i) order[i] = i;
  Ready ready(static_cast<std::size_t>(r.ranks));
  mpi_ring_allreduce(b, order, r.bytes, {}, ready);
  Schedule s = b.finish();
  s.lock_step = true;
  return s;
}

}  // namespace gpuscale::coll
