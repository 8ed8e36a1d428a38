#include "sim/collectives/mpich_pairs.hpp"

namespace gpuscale::coll {

MpichPairs::MpichPairs(int ranks) {
  while (pof2_ * 2 <= ranks) pof2_ *= 2;
  rem_ = ranks - pof2_;
}

void MpichPairs::fold_in(ScheduleBuilder& b, double bytes, Ready& ready) const {
  for (int r = 0; r < 2 * rem_; r += 2) {
    const int sent = b.transfer(r, r + 1, bytes, 1, {});
    ready[r] = {sent};
    ready[r + 1] = {b.reduce(r + 1, kSumTrafficPerByte * bytes, {sent})};
  }
}

void MpichPairs::fold_out(ScheduleBuilder& b, double bytes, Ready& ready) const {
  for (int r = 0; r < 2 * rem_; r += 2) {
    std::vector<int> deps = ready[r + 1];
    deps.insert(deps.end(), ready[r].begin(), ready[r].end());
    const int sent = b.transfer(r + 1, r, bytes, 1, deps);
    ready[r] = {sent};
    ready[r + 1] = {sent};
  }
}

void exchange_round(ScheduleBuilder& b, const MpichPairs& pairs, int mask, double bytes, bool sum,
                    Ready& ready) {
  const int n = pairs.pof2();
  std::vector<int> sent(n);
  for (int k = 0; k < n; ++k) {
    const int me = pairs.real(k), partner = pairs.real(k ^ mask);
    std::vector<int> deps = ready[me];
    deps.insert(deps.end(), ready[partner].begin(), ready[partner].end());
    sent[k] = b.transfer(me, partner, bytes, 1, deps);
  }
  for (int k = 0; k < n; ++k) {
    const int me = pairs.real(k);
    const std::vector<int> both = {sent[k ^ mask], sent[k]};
    ready[me] = sum ? std::vector<int>{b.reduce(me, kSumTrafficPerByte * bytes, both)} : both;
  }
}

}  // namespace gpuscale::coll
