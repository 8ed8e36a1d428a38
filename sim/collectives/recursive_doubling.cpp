// recursive_doubling: MPICH's recursive-doubling allreduce
// (MPIR_Allreduce_intra_recursive_doubling, SMPI "rdb"): in round k = 0..log2(p)-1 each rank
// swaps its whole vector S with the rank 2^k away and sums the two. The latency-optimal choice
// for small messages:
//   T = log2(p) (alpha + S/B + 3S/gamma)                       for p a power of two
// For other p, MPICH first folds the first 2 rem ranks in pairs (mpich_pairs.hpp), then runs the
// power-of-two algorithm on p' = 2^floor(log2 p) ranks and sends the result back:
//   T = (log2(p') + 1)(alpha + S/B + 3S/gamma) + alpha + S/B
// 2 p' log2(p') + 3 rem ops (9216 at 512 ranks).
#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/mpich_pairs.hpp"

namespace gpuscale::coll {

Schedule build_recursive_doubling(const CollectiveRequest& r) {
  ScheduleBuilder b("recursive_doubling", r);
  const MpichPairs pairs(r.ranks);
  Ready ready(static_cast<std::size_t>(r.ranks));
  pairs.fold_in(b, r.bytes, ready);
  for (int mask = 1; mask < pairs.pof2(); mask <<= 1) {
    exchange_round(b, pairs, mask, r.bytes, true, ready);
  }
  pairs.fold_out(b, r.bytes, ready);
  Schedule s = b.finish();
  s.lock_step = pairs.pof2() == r.ranks;  // MPICH's folds leave the other counts out of step
  return s;
}

}  // namespace gpuscale::coll
