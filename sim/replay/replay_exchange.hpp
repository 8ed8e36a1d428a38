// What the replay asks of a run's exchanges, which sim/exchange implements (one class per
// method): how the gradients are exchanged and the weights updated (ReplayExchange), and what a
// layer's pass receives from other GPUs before it can finish where each sample is split over
// several (PassExchange).
//
// Contract of a gradient exchange: the replay hands over each parameter tensor ("key") in the
// order its gradient becomes ready, saying where it stands on each compute rank (GradientReady);
// the exchange builds its copies, reductions, collectives, host work and updates into the
// replay's graph, and sets the key's new weights on every compute rank as soon as it knows them
// (at the latest when the iteration ends), calling ExchangeIteration::updated.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "sim/collectives/schedule.hpp"
#include "sim/engine/dag_executor.hpp"
#include "sim/replay/replay_measure.hpp"
#include "workloads/src/iteration_graph.hpp"

namespace gpuscale::sim {

class ReplayGraph;

// One iteration, as the replay hands it to the gradient exchange.
struct ExchangeIteration {
  using NodeId = DagExecutor::NodeId;
  // [tensor][compute rank]: the weights each compute rank's GPU has; the next iteration's
  // forward of a layer waits for its tensors'.
  std::vector<std::vector<NodeId>>& weights;
  // [tensor][simulated process]: the Python thread's push of each key (MXNet's update(), the
  // issue of PyTorch's optimizer.step()).
  const std::vector<std::vector<NodeId>>& pushed;
  // [compute rank]: the issue of the iteration's last backward segment.
  const std::vector<NodeId>& backward_issued;
  IterationNodes& nodes;

  // Tensor `t`'s new weights are set: the iteration ends with them.
  void updated(size_t t) {
    for (NodeId w : weights[t]) nodes.ends.push_back(w);
    nodes.rank0_weights.push_back(weights[t][0]);
  }
};

// Where one key's gradient stands, by compute rank.
struct GradientReady {
  using NodeId = DagExecutor::NodeId;
  // The gradient is on the GPU and, where the Python thread pushes each key (MXNet's update()),
  // pushed. PyTorch's Python thread has no part in it: DDP's reducer and Horovod's hook run on
  // autograd's thread (torch/csrc/distributed/c10d/reducer.cpp, horovod/torch/__init__.py:146-162
  // at v0.19.1), and optimizer.step() waits for the exchange, not the other way round.
  std::vector<NodeId> computed;
  // The host has handed it to the exchange library, which may be before it is computed: an
  // eager framework's gradient hook runs on the issuing thread once the kernels writing the
  // gradient are issued (PyTorch: AccumulateGrad's post-hooks, torch/csrc/autograd/engine.cpp),
  // while the GPU runs behind; MXNet's engine runs Horovod's op only once the gradient is
  // written (horovod/mxnet/mpi_ops.cc:134-143 at v0.19.1: MXEnginePushAsync with the gradient as a
  // dependency).
  std::vector<NodeId> handed_over;
};

// A gradient exchange's state during one run's graph construction.
class GradientExchangeBuild {
 public:
  using NodeId = DagExecutor::NodeId;
  virtual ~GradientExchangeBuild() = default;
  // Key `key`'s gradient is ready on each compute rank.
  virtual void gradient_ready(int key, const GradientReady& ready, ExchangeIteration& it) = 0;
  // Every key of the iteration has been handed over.
  virtual void end_iteration(ExchangeIteration& /*it*/) {}
  // Every iteration has been built, before the graph runs.
  virtual void end_run() {}
};

class ReplayExchange {
 public:
  virtual ~ReplayExchange() = default;
  // Whether each GPU has a training process (and Python thread) of its own.
  virtual bool process_per_gpu() const = 0;
  // The schedules the exchange's transfers follow, at any size (a schedule's rank pairs do not
  // depend on its size): the platform routes those it simulates flow by flow.
  virtual std::vector<coll::Schedule> routed_schedules(ReplayGraph& graph) const = 0;
  // The exchange's state for one run, building into `graph`.
  virtual std::unique_ptr<GradientExchangeBuild> build(ReplayGraph& graph) const = 0;
};

// What a layer's pass receives from other GPUs where each sample is split over several.
class PassExchange {
 public:
  using NodeId = DagExecutor::NodeId;
  virtual ~PassExchange() = default;
  // The share of `task`'s kernel on compute rank `rank` that needs nothing from other GPUs;
  // none where the pass receives nothing.
  virtual std::optional<double> interior_fraction(int rank, const wl::Task& task) const = 0;
  // What compute rank `rank` receives for `task`, sent once `start` is done: each receive's end.
  virtual std::vector<NodeId> receive(ReplayGraph& graph, int rank, const wl::Task& task,
                                      NodeId start) const = 0;
  // The copies of every receive of the simulated ranks, for the platform to route.
  virtual std::vector<coll::Schedule> routed_schedules(ReplayGraph& graph) const = 0;
};

}  // namespace gpuscale::sim
