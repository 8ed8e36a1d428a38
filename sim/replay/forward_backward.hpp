// Each GPU's forward and backward kernels in an iteration, as the framework runs them: in bulked
// segments of at most ExecutionModel::bulk_segment_ops, one engine operation each, each pass on
// its own. A segment never spans a layer's parameters (MXNet's BulkTrainingOpSegs,
// src/executor/graph_executor.cc:1365-1420 at 1.1.0): in forward a segment ends where the
// weights of the next layer with parameters come in (a variable node); in backward the op that
// writes a weight gradient runs alone, between segments, so that gradient is ready as soon as its
// op is done.
//
// MXNet issues a segment once the previous one has synchronised and the weights it reads are
// updated; a framework that does not synchronise per operation issues it as soon as the previous
// one is issued, and its kernels wait on the GPU for the weights. Without syncs, program order
// still holds on the issuing thread: the next forward is issued after the previous iteration's
// optimizer step. A pass that receives from other GPUs (PassExchange: a split sample's halo) runs
// its interior while the receives travel, then its border.
#pragma once

#include <vector>

#include "sim/compute/compute_model.hpp"
#include "sim/replay/input_phase.hpp"
#include "sim/replay/replay_exchange.hpp"
#include "sim/replay/replay_graph.hpp"
#include "workloads/src/iteration_graph.hpp"

namespace gpuscale::sim {

// What the forward and backward leave for the exchange, by compute rank.
struct PassesDone {
  using NodeId = DagExecutor::NodeId;
  std::vector<std::vector<NodeId>> grad_ready;  // [layer][rank]: its weight gradient is ready
  // [layer][rank]: the issuing thread is past the op writing its weight gradient (after its
  // sync, where the framework syncs after every operation; before the GPU has run it otherwise).
  std::vector<std::vector<NodeId>> grad_issued;
  std::vector<NodeId> forward_done;             // the last forward segment
  std::vector<NodeId> backward_issued;          // the last backward segment's issue
};

class ForwardBackward {
 public:
  // `halo`: what split passes receive; null where no sample is split.
  ForwardBackward(ReplayGraph& graph, const wl::IterationGraph& tasks, const PassExchange* halo);

  // Iteration `k`'s passes on every compute rank, after `work`, each forward reading the weights
  // `weights` holds ([tensor][compute rank], from the previous iteration); notes rank 0's
  // kernels and each rank's last segment in `nodes`.
  PassesDone build(int k, const IssuedWork& work,
                   const std::vector<std::vector<DagExecutor::NodeId>>& weights,
                   IterationNodes& nodes);

  // The tensors of each layer, in parameter order.
  const std::vector<std::vector<int>>& tensors_of_layer() const { return tensors_of_layer_; }
  // Rank 0's kernels of one iteration alone (no communication), seconds: its layers' passes.
  double layers_s() const;

 private:
  using NodeId = DagExecutor::NodeId;
  void form_segments(const wl::IterationGraph& tasks);
  // A layer's pass on `rank`'s GPU once `deps` are done: its end. `gpu_work`, if given, receives
  // each kernel node (two where a receive splits the pass into its interior and its border).
  NodeId kernel(int rank, const wl::Task& task, const std::vector<NodeId>& deps,
                std::vector<NodeId>* gpu_work);

  ReplayGraph& g_;
  const PassExchange* halo_;
  bool sync_after_op_;
  bool reads_loss_before_backward_;  // PyTorch's loss.item() before backward
  std::vector<std::vector<int>> tensors_of_layer_;
  std::vector<std::vector<const wl::Task*>> segments_;
  std::vector<compute::LayerTimes> layer_times_;
  std::vector<NodeId> stream_tail_;  // [compute rank]: the GPU stream's last kernel
};

}  // namespace gpuscale::sim
