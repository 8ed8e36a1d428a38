// The start of an iteration on the host: each process's input pipeline (decode threads filling a
// prefetch queue, batch after batch), its Python thread taking the next batch and issuing each
// of its GPUs' work, and each GPU's batch copied from the host by that GPU's copy pool.
//
// Every process decodes: where one simulated process stands for the job's and their batches take
// different times (sampled variability), each of the job's processes runs its own decode threads
// and prefetch queue, and the simulated one starts an iteration once the last of them has its
// batch, as the iteration's first synchronisation would make it wait. Each process takes its
// batch when it is decoded and the (shared) Python thread reaches for it, so its queue absorbs a
// slow batch as a real one does: no order statistic would. It assumes the processes' Python
// threads reach for their batches together, as they do where each iteration ends in a sync.
#pragma once

#include <vector>

#include "sim/replay/replay_graph.hpp"
#include "sim/replay/replay_measure.hpp"

namespace gpuscale::sim {

// What the input phase leaves for the GPUs' forward and backward, by compute rank.
struct IssuedWork {
  using NodeId = DagExecutor::NodeId;
  std::vector<NodeId> issued;  // the Python thread has issued the GPU's iteration
  std::vector<NodeId> loaded;  // the GPU's batch is on it (-1: no input pipeline)
};

class InputPhase {
 public:
  explicit InputPhase(ReplayGraph& graph);

  // Iteration `k`'s batches and issues; notes process 0's decoded batch in `nodes`.
  IssuedWork build(int k, IterationNodes& nodes);

  // The shortest steady-state iteration the decode threads allow: one batch of one process on
  // them (0 without the input pipeline).
  double steady_batch_s() const;

 private:
  using NodeId = DagExecutor::NodeId;
  using Thread = ReplayGraph::Thread;

  // The decode threads of one process: `taken` are the batches the process has taken, each
  // freeing a prefetch slot.
  NodeId decode_batch(int k, Thread& decoder, const std::vector<NodeId>& taken, double factor);

  ReplayGraph& g_;
  double decode_s_ = 0;                         // one batch of one process on its decode threads
  std::vector<Thread> decode_;                  // [simulated process]
  std::vector<std::vector<NodeId>> fetched_;    // [simulated process][k]
  std::vector<Thread> job_decode_;              // [job process], where every process decodes
  std::vector<std::vector<NodeId>> job_taken_;  // [job process][k]
};

}  // namespace gpuscale::sim
