// The order in which one pipeline stage runs its micro-batches' passes under 1F1B
// (PipeDream-Flush; Megatron-LM's non-interleaved schedule, Narayanan et al. SC'21 sec. 2.2.1,
// megatron/core/pipeline_parallel/schedules.py forward_backward_pipelining_without_interleaving):
// stage k of p runs min(p - k - 1, m) warm-up forwards, then alternates one forward and one
// backward while forwards remain, then the cool-down's remaining backwards. Backwards run in
// micro-batch order, as do forwards. Data only: the simulation (pipeline_sim.hpp) adds the waits
// for the neighbouring stages.
#pragma once

#include <vector>

namespace gpuscale::par {

struct PassStep {
  bool forward = true;
  int micro_batch = 0;
  bool operator==(const PassStep&) const = default;
};

std::vector<PassStep> one_f_one_b(int stage, int stages, int micro_batches);

}  // namespace gpuscale::par
