// The start of an iteration on the host: each process's input pipeline (decode threads filling a
// prefetch queue, batch after batch), its Python thread taking the next batch and issuing each
// of its GPUs' work, and each GPU's batch copied from the host by that GPU's copy pool.
//
// Decoding on the GPU (DALI), each GPU's pipeline has its own decode threads (Huffman only), and
// the pipeline itself copies the coefficients to its GPU as soon as a batch is decoded, where
// the decode kernels take them, sharing the GPU with the training kernels running then (one
// iteration ahead: prefetch); the forward waits for them.
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

  // The decode threads of one process: `slot_freed[k]` frees the prefetch slot of batch k once
  // the process has taken it (-1: the decode threads' own order frees it).
  NodeId decode_batch(int k, Thread& decoder, const std::vector<NodeId>& slot_freed,
                      double factor);
  // Process `p`'s batch `k` out of its decode threads (every job process's, where each decodes);
  // `taken`: the process takes it in iteration `k`, freeing a prefetch slot.
  NodeId decoded_batch(int k, int p, bool taken);
  // Decoding on the GPU: the decoded batch's coefficients copied to rank `r`'s GPU by the
  // pipeline, then its decode kernels there.
  NodeId decode_on_gpu(int r, NodeId decoded);

  ReplayGraph& g_;
  double decode_s_ = 0;                         // one batch of one process on its decode threads
  std::vector<Thread> decode_;                  // [simulated process]
  std::vector<std::vector<NodeId>> fetched_;    // [simulated process][k]
  std::vector<Thread> job_decode_;              // [job process], where every process decodes
  std::vector<NodeId> reached_;                 // [k]: the Python thread reached for batch k
};

}  // namespace gpuscale::sim
