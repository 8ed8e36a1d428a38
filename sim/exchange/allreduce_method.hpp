// What the allreduce methods share (Horovod's fusion, DDP's buckets, one allreduce per tensor):
// one process per GPU (Horovod, torch.distributed.launch, mpirun), gradients grouped by the
// method and each group allreduced by the run's collective algorithm, one after another on one
// communication stream, then every replica updated:
//  - each weight once its own gradient is exchanged (MXNet's engine with Horovod: a key's update
//    runs once its allreduce is done), or
//  - every weight once every gradient is exchanged (ExecutionModel::updates): Horovod's step()
//    synchronizes every handle before the optimizer runs, the issuing thread waiting on the host
//    (horovod/torch/__init__.py:164-214 at v0.19.1); DDP's reducer makes the stream wait for each
//    bucket's allreduce at the end of backward (finalize_backward, torch/csrc/distributed/c10d/
//    reducer.cpp at v1.6.0) and the thread issues optimizer.step() once backward() has returned.
// A grouping is one subclass: how it groups gradients as they become ready in the replay
// (AllreduceBuild::reduce), and as it would group the whole list at once in the Chakra export
// (static_groups).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/exchange/exchange_method.hpp"
#include "sim/replay/replay_graph.hpp"

namespace gpuscale::sim {

// One run's allreduces in the replay's graph.
class AllreduceBuild : public GradientExchangeBuild {
 public:
  AllreduceBuild(ReplayGraph& graph, std::string algorithm, bool updates_after_every_exchange);

  void gradient_ready(int key, const GradientReady& ready, ExchangeIteration& it) final;
  void end_iteration(ExchangeIteration& it) final;

 protected:
  // Key `key`'s gradient, computed on every compute rank at `computed` and handed over on each
  // at `handed_over` (GradientReady, by compute rank), into its group's allreduce: the node that
  // ends once the summed gradient is on every GPU.
  virtual NodeId reduce(int key, NodeId computed, const std::vector<NodeId>& handed_over) = 0;
  // The iteration's gradients have all been handed over (DDP closes its last bucket).
  virtual void close_iteration() {}

  // The allreduce of `bytes` after `start`: its end.
  NodeId allreduce(double bytes, NodeId start);
  // Gradients copied into a flat buffer of `bytes` on every GPU, the allreduce, and the copies
  // back (a device-to-device copy reads and writes each byte), one after another on one stream
  // after `start`: when the gradients are back in place.
  NodeId flat_buffer_allreduce(double bytes, NodeId start);

  ReplayGraph& g_;
  // The communication stream's last allreduce (or copy out of its buffer); -1: none yet.
  NodeId last_on_stream_ = -1;

 private:
  std::string algorithm_;
  bool after_every_exchange_;
  std::vector<std::pair<size_t, NodeId>> exchanged_;  // the iteration's [key, its allreduce's end]
};

class AllreduceMethod : public ExchangeMethod {
 public:
  using ExchangeMethod::ExchangeMethod;

  bool process_per_gpu() const override { return true; }
  std::vector<coll::Schedule> routed_schedules(ReplayGraph& graph) const override;

 protected:
  bool updates_after_every_exchange() const override {
    return framework().execution.updates != wl::UpdateTiming::PerKey;
  }
  void export_exchange(ExchangeTrace& trace) const override;

  // The groups the method would form from gradients of `bytes` all ready at once, as indices into
  // `bytes`, in order.
  virtual std::vector<std::vector<int>> static_groups(const std::vector<double>& bytes) const = 0;
  // Whether a group of `tensors` is copied into a flat buffer and back around its allreduce.
  virtual bool flat_buffer(size_t tensors) const = 0;
  // The name of group `k` of `tensors` tensors in the trace, where a lone tensor's own name
  // (`tensor`) is not used.
  virtual std::string group_name(size_t k, size_t tensors, const std::string& tensor) const = 0;
};

}  // namespace gpuscale::sim
