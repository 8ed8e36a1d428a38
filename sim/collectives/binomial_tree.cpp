// binomial_tree: a binomial-tree reduce to the root followed by a binomial-tree broadcast from it
// (MPICH's MPIR_Reduce_intra_binomial and binomial MPIR_Bcast; SMPI "redbcast" with binomial
// trees), the classic latency-oriented allreduce. Ranks are numbered relative to the root. Reduce:
// in round k a rank whose relative index has lowest set bit 2^k sends its partial sum S to the
// rank 2^k below, which sums it in; the root receives in every one of K = ceil(log2 p) rounds.
// Broadcast: each rank forwards S to relative index + 2^j for each 2^j below its lowest set bit,
// highest first, blocking sends one after another; the root sends K times. Without contention:
//   allreduce  T = K (2 alpha + 2 S/B + 3S/gamma)
//   reduce     T = K (alpha + S/B + 3S/gamma)
//   broadcast  T = K (alpha + S/B)
// Every byte crosses a tree edge whole, so the bandwidth term grows with log p (against the
// ring's 2S/B): the algorithm MPI libraries use for small messages. 3(p-1) ops for allreduce.
#include "sim/collectives/algorithms.hpp"

namespace gpuscale::coll {

Schedule build_binomial_tree(const CollectiveRequest& r) {
  ScheduleBuilder b("binomial_tree", r);
  std::vector<int> all(static_cast<std::size_t>(r.ranks));
  for (int i = 0; i < r.ranks; ++i) all[i] = i;
  Ready ready(all.size());
  if (r.kind != Collective::Broadcast) binomial_reduce(b, all, r.root, r.bytes, ready);
  if (r.kind != Collective::Reduce) binomial_broadcast(b, all, r.root, r.bytes, ready);
  Schedule s = b.finish();
  // A round's pairs move the same bytes, but those across a spine end after those within a leaf,
  // and a pair of the next round that follows an early one starts early (sim/engine/lock_step.hpp).
  s.lock_step = true;
  s.ops_start_when_ready = true;
  return s;
}

}  // namespace gpuscale::coll
