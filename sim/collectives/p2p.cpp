// p2p: MXNet's kvstore=device for one key (src/kvstore/comm.h, CommDevice; brief section 7), the
// study's "P2P". The key's reducer (request.root; wl::assign_reducers picks it per key) gathers
// every other GPU's gradient by direct peer copies (p-1 concurrent Transfers of S; pairs without
// peer access take two-hop routes, which the replay handles), sums the p copies in one kernel
// (a Reduce reading p S and writing S), then copies the sum back to every other GPU:
//   allreduce  T = 2 (alpha + S/B) + (p+1) S/gamma      without contention
//   reduce     T = alpha + S/B + (p+1) S/gamma
//   broadcast  T = alpha + S/B
// With contention the reducer's links carry (p-1) S in each direction, which is what limits P2P
// on a DGX-1. Moves 2(p-1) S. 2p - 1 ops. Lock-step: the gathers start together, the sum waits
// for all of them and the copies back for the sum, so each depth ending with its slowest op is
// what the copies do, and at scale the replay evaluates them from link loads (sim/engine/
// lock_step.hpp) rather than thousands of flows converging on one GPU in SimGrid.
#include "sim/collectives/algorithms.hpp"

namespace gpuscale::coll {

Schedule build_p2p(const CollectiveRequest& r) {
  ScheduleBuilder b("p2p", r);
  std::vector<int> result;  // what the copies back wait for: nothing for a broadcast
  if (r.kind != Collective::Broadcast) {
    std::vector<int> gathered;
    for (int rank = 0; rank < r.ranks; ++rank) {
      if (rank != r.root) gathered.push_back(b.transfer(rank, r.root, r.bytes, 1, {}));
    }
    result = {b.reduce(r.root, (r.ranks + 1) * r.bytes, gathered)};
  }
  if (r.kind != Collective::Reduce) {
    for (int rank = 0; rank < r.ranks; ++rank) {
      if (rank != r.root) b.transfer(r.root, rank, r.bytes, 1, result);
    }
  }
  Schedule s = b.finish();
  s.lock_step = true;
  return s;
}

}  // namespace gpuscale::coll
