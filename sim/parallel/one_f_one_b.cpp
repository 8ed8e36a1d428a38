#include "sim/parallel/one_f_one_b.hpp"

#include <algorithm>

namespace gpuscale::par {

std::vector<PassStep> one_f_one_b(int stage, int stages, int micro_batches) {
  const int warmup = std::min(stages - stage - 1, micro_batches);
  std::vector<PassStep> steps;
  int next_forward = 0, next_backward = 0;
  for (; next_forward < warmup; ++next_forward) steps.push_back({true, next_forward});
  while (next_forward < micro_batches) {
    steps.push_back({true, next_forward++});
    steps.push_back({false, next_backward++});
  }
  while (next_backward < micro_batches) steps.push_back({false, next_backward++});
  return steps;
}

}  // namespace gpuscale::par
