// MPICH's handling of a rank count p that is not a power of two, shared by recursive_doubling and
// rabenseifner (MPICH's MPIR_Allreduce_intra_recursive_doubling and
// MPIR_Allreduce_intra_reduce_scatter_allgather): with p' the largest power of two <= p and
// rem = p - p', each even rank r < 2 rem sends its whole vector to r + 1, which sums it in and
// stands for both in the power-of-two algorithm; at the end r + 1 sends the result back to r.
// Costs alpha + S/B + 3S/gamma before and alpha + S/B after.
#pragma once

#include "sim/collectives/builder.hpp"

namespace gpuscale::coll {

class MpichPairs {
 public:
  explicit MpichPairs(int ranks);

  int pof2() const { return pof2_; }
  // The real rank standing for rank `new_rank` of the power-of-two algorithm.
  int real(int new_rank) const { return new_rank < rem_ ? 2 * new_rank + 1 : new_rank + rem_; }

  void fold_in(ScheduleBuilder& b, double bytes, Ready& ready) const;
  void fold_out(ScheduleBuilder& b, double bytes, Ready& ready) const;

 private:
  int pof2_ = 1, rem_ = 0;
};

// One pairwise exchange round of the power-of-two algorithm: every new rank k swaps `bytes` with
// k ^ mask (a sendrecv: both directions at once, each waiting for both ends to be ready); with
// `sum`, each then sums what it received (3 bytes of memory traffic per byte).
void exchange_round(ScheduleBuilder& b, const MpichPairs& pairs, int mask, double bytes, bool sum,
                    Ready& ready);

}  // namespace gpuscale::coll
