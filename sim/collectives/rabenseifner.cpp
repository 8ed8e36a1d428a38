// rabenseifner: Rabenseifner's allreduce as MPICH implements it
// (MPIR_Allreduce_intra_reduce_scatter_allgather; SMPI "rab"): a reduce-scatter by recursive
// halving, where in round k (mask 2^k, k = 0..log2(p)-1) each rank sends the half of its current
// segment that its partner k ^ mask keeps, S/2^(k+1), and sums the half it keeps; then an
// allgather by recursive doubling, masks in reverse, the segments doubling from S/p to S/2.
// Bandwidth-optimal like the ring, with log2(p) latency terms per phase instead of p-1:
//   T = 2 log2(p) alpha + 2(p-1)/p S/B + 3(p-1)/p S/gamma          for p a power of two
// Other p: MPICH's fold in pairs before and after (mpich_pairs.hpp), with p' = 2^floor(log2 p):
//   T = (alpha + S/B + 3S/gamma) + [the above with p'] + (alpha + S/B)
// 3 p' log2(p') + 3 rem ops (13824 at 512 ranks).
#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/mpich_pairs.hpp"

namespace gpuscale::coll {

Schedule build_rabenseifner(const CollectiveRequest& r) {
  ScheduleBuilder b("rabenseifner", r);
  const MpichPairs pairs(r.ranks);
  Ready ready(static_cast<std::size_t>(r.ranks));
  pairs.fold_in(b, r.bytes, ready);
  for (int mask = 1; mask < pairs.pof2(); mask <<= 1) {
    exchange_round(b, pairs, mask, r.bytes / (2.0 * mask), true, ready);
  }
  for (int mask = pairs.pof2() / 2; mask >= 1; mask >>= 1) {
    exchange_round(b, pairs, mask, r.bytes / (2.0 * mask), false, ready);
  }
  pairs.fold_out(b, r.bytes, ready);
  Schedule s = b.finish();
  s.lock_step = pairs.pof2() == r.ranks;  // MPICH's folds leave the other counts out of step
  return s;
}

}  // namespace gpuscale::coll
