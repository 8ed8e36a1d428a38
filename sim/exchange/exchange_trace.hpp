// An iteration's trace graph (workloads/interop/trace_graph.hpp) as `gpuscale run
// --export-chakra` builds it (sim/trace/iteration_trace.hpp): the forward and backward kernels are
// in, and each gradient is ready after some of them; the exchange method (export_trace) adds its
// collectives, its copies as kernels, and each tensor's weight update as a kernel.
#pragma once

#include <string>
#include <vector>

#include "sim/compute/compute_model.hpp"
#include "workloads/interop/trace_graph.hpp"
#include "workloads/src/layer_costs.hpp"

namespace gpuscale::sim {

class ExchangeTrace {
 public:
  // A parameter tensor's gradient: the kernels after which it is ready.
  struct Gradient {
    size_t tensor = 0;
    std::vector<int> ready;  // trace nodes
  };

  // `ranks`: the job's; `tensor_bytes`: each parameter tensor's, in parameter order.
  ExchangeTrace(const wl::WorkloadCosts& costs, const compute::ComputeTimeModel& compute,
                std::vector<double> tensor_bytes, int ranks)
      : costs_(costs), compute_(compute), tensor_bytes_(std::move(tensor_bytes)), ranks_(ranks) {}

  int ranks() const { return ranks_; }
  // The gradients, in the order they become ready.
  const std::vector<Gradient>& gradients() const { return gradients_; }
  void add_gradient(Gradient g) { gradients_.push_back(std::move(g)); }
  const std::string& name_of(const Gradient& g) const { return costs_.tensors[g.tensor].name; }
  double bytes_of(const Gradient& g) const { return tensor_bytes_[g.tensor]; }

  // A node after its deps (sorted, once each): its index.
  int add(interop::TraceNode node);
  int kernel(std::string name, double seconds, std::vector<int> deps);
  int collective(std::string name, wl::Collective kind, double bytes, std::vector<int> deps);
  // A device-to-device copy of `bytes` (it reads and writes each), seconds.
  double copy_s(double bytes) const { return compute_.reduction_time(2 * bytes).value; }
  // Gradient `g`'s weight update as a kernel.
  int update(const Gradient& g, std::vector<int> deps);
  // Each gradient's update after its exchange (`exchanged[i]`: the nodes that end gradient i's),
  // or, `after_every_exchange`, after every exchange and the last kernel.
  void updates(const std::vector<std::vector<int>>& exchanged, bool after_every_exchange);

  // The last forward or backward kernel (the GPU's one stream), -1 if none.
  int last_kernel = -1;
  interop::TraceGraph graph;

 private:
  const wl::WorkloadCosts& costs_;
  const compute::ComputeTimeModel& compute_;
  std::vector<double> tensor_bytes_;
  int ranks_;
  std::vector<Gradient> gradients_;  // in ready order
};

}  // namespace gpuscale::sim
