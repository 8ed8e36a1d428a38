// Checks and a reference cost for schedules, without an engine.
//
// critical_path_s: the finish time of a schedule under a uniform alpha-beta-gamma model with no
// contention: an op starts when its last dep finishes and takes
//   Transfer  latency_steps * alpha + bytes / beta
//   Reduce    bytes / gamma
//   Delay     seconds
// Concurrent ops never slow each other, so this is the closed form of each algorithm
// (docs/collectives.md) and a lower bound of what the replay gives on a uniform machine.
#pragma once

#include "sim/collectives/schedule.hpp"

namespace gpuscale::coll {

struct UniformCost {
  double alpha_s = 0;                 // route latency of every Transfer, seconds
  double bandwidth_Bps = 1;           // beta: bytes per second of every Transfer
  double reduce_bandwidth_Bps = 1;    // gamma: memory bytes per second of every Reduce
};

double critical_path_s(const Schedule& schedule, const UniformCost& cost);

// Throws std::logic_error naming the first op that breaks the contract of schedule.hpp: a dep
// that is not an earlier op (or repeated, or out of order), a rank out of range, a Transfer to
// itself, bytes, seconds or latency_steps negative or not finite. A bad schedule is our bug.
void validate(const Schedule& schedule);

}  // namespace gpuscale::coll
