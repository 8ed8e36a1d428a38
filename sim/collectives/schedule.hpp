// A collective algorithm as data: a schedule of transfers, reductions and delays with their
// dependencies, which the replay engine turns into SimGrid activities. Algorithms never touch
// SimGrid, so each is testable in microseconds (docs/collectives.md).
//
// What the replay does with each op:
//  - Transfer: one flow over the route between the two ranks' GPUs, taking about
//    latency_steps * route latency + bytes / bandwidth under contention. A flow may stand for a
//    whole pipeline (a ring's 2(p-1) steps), hence latency_steps > 1, and then pays its
//    pipeline's mean route latency (Op::pipeline).
//  - Reduce: GPU time on rank `src`, bytes / memory bandwidth.
//  - Delay: a fixed time on no resource (protocol or software latency); a zero-second Delay is a
//    join point that keeps the dependency count O(p).
#pragma once

#include <string>
#include <vector>

namespace gpuscale::coll {

// Contract: ops are in a topological order; deps name earlier ops by index, each at most once,
// in increasing order. Ranks are 0..ranks-1. An op starts when all its deps have finished.
struct Op {
  enum class Kind { Transfer, Reduce, Delay };
  Kind kind = Kind::Transfer;
  int src = -1, dst = -1;  // Transfer: from src to dst. Reduce: src is the rank whose GPU reduces.
  double bytes = 0;        // Transfer: bytes on the wire. Reduce: bytes of memory traffic of the
                           // reduction kernel (inputs read + output written).
  double seconds = 0;      // Delay: fixed time (protocol/software latency), on no resource.
  int latency_steps = 1;   // Transfer: the route's latency is paid this many times (a flow
                           // standing for a pipelined ring pays it 2(p-1) times).
  std::vector<int> deps;
  // Transfer: the flows standing for one pipeline (a channel's ring or chain) share an id >= 0.
  // Each then pays latency_steps times the mean route latency of its pipeline's flows instead of
  // its own: a chunk crossing the pipeline's edges in turn pays each edge's latency, so a ring
  // of NVLink hops and one network hop pays mostly NVLink latencies, not the network's each step.
  // Where the schedule has already paid a latency per step (Schedule::pipeline_step_latency_s),
  // a step costs the larger of the two, not their sum.
  int pipeline = -1;

  bool operator==(const Op&) const = default;
};

struct Schedule {
  std::string algorithm;     // the registry name ("nccl_ring")
  int ranks = 0;
  double payload_bytes = 0;  // the collective's message size S per rank
  std::vector<Op> ops;
  // Per pipeline id: the latency per step that a Delay of the schedule already pays for it (NCCL's
  // hop latency, which is its measure of a whole hop, wire included); 0 where none is paid.
  std::vector<double> pipeline_step_latency_s{};
  // Rounds in lock step (MPICH's pairwise exchanges on a power of two ranks): every op of one
  // dependency depth does the same work on a different rank, so a depth ends when its slowest op
  // does. The replay may then evaluate each depth's transfers from their link loads instead of
  // flow by flow (sim/engine/lock_step.hpp).
  bool lock_step = false;
  // With lock_step: each op starts when its own dependencies end, not when its depth's slowest op
  // does, each transfer still taking the time its depth's link loads give it. A binomial tree's
  // rounds: a pair within a leaf ends before one across the spine, and the next round's pair that
  // follows it need not wait for the other.
  bool ops_start_when_ready = false;

  bool operator==(const Schedule&) const = default;
};

const char* to_string(Op::Kind kind);

// `schedules` run at once as one schedule: their ops in turn, each keeping its own dependencies
// and pipelines; lock-step if every one is. Its depths are theirs side by side, so evaluated from
// link loads (sim/engine/lock_step.hpp) their transfers share links as they would running at once.
Schedule side_by_side(std::vector<Schedule> schedules);

}  // namespace gpuscale::coll
