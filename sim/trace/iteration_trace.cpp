#include "sim/trace/iteration_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/collectives/request.hpp"
#include "sim/experiment/replay_inputs.hpp"
#include "topologies/core/error.hpp"
#include "workloads/src/iteration_graph.hpp"

namespace gpuscale::sim {
namespace {

using interop::TraceGraph;
using interop::TraceNode;
using Kind = TraceNode::Kind;

class IterationTrace {
 public:
  explicit IterationTrace(const ReplaySetup& s)
      : s_(s), ranks_(static_cast<int>(s.gpus.size())),
        tasks_(wl::build_iteration_graph(*s.workload, *s.costs, ranks_)) {
    const double element = wl::bytes_per_element(s.workload->precision);
    for (const wl::ParamTensor& t : s.costs->tensors) tensor_bytes_.push_back(t.elements * element);
    graph_.source = fmt::format("gpuscale run: {} at batch {} per GPU on {} GPUs of {}, comm {}, "
                                "framework {}",
                                s.workload->name, s.batch, ranks_, s.topology->name(), s.comm,
                                s.framework->name);
  }

  TraceGraph build() && {
    kernels();
    const wl::ExchangeLayout layout = s_.framework->exchange_layout(s_.comm);
    if (ranks_ == 1) {
      for (const Gradient& g : gradients_) exchanged_.push_back(g.ready);
    } else if (layout == wl::ExchangeLayout::KvstoreDevice) {
      for (const Gradient& g : gradients_) {
        exchanged_.push_back({add({Kind::Collective, fmt::format("allreduce {}", name_of(g)), 0,
                                   coll::Collective::AllReduce, bytes_of(g), 0, g.ready})});
      }
    } else if (layout == wl::ExchangeLayout::KvstoreNccl) {
      kvstore_nccl();
      return std::move(graph_);
    } else {
      allreduces();
    }
    updates(layout == wl::ExchangeLayout::Allreduce &&
            s_.framework->execution.updates != wl::UpdateTiming::PerKey);
    return std::move(graph_);
  }

 private:
  // A parameter tensor's gradient: the kernels after which it is ready.
  struct Gradient {
    size_t tensor = 0;
    std::vector<int> ready;  // graph_ nodes
  };

  int add(TraceNode node) {
    std::sort(node.deps.begin(), node.deps.end());
    node.deps.erase(std::unique(node.deps.begin(), node.deps.end()), node.deps.end());
    graph_.nodes.push_back(std::move(node));
    return static_cast<int>(graph_.nodes.size()) - 1;
  }
  int kernel(std::string name, double seconds, std::vector<int> deps) {
    return add({Kind::Compute, std::move(name), seconds, coll::Collective::AllReduce, 0, 0,
                std::move(deps)});
  }
  const std::string& name_of(const Gradient& g) const { return s_.costs->tensors[g.tensor].name; }
  double bytes_of(const Gradient& g) const { return tensor_bytes_[g.tensor]; }

  // Every forward and backward kernel in the stream's order; the gradients in ready order.
  void kernels() {
    std::vector<int> node_of(tasks_.tasks.size(), -1);
    for (size_t i = 0; i < tasks_.tasks.size(); ++i) {
      const wl::Task& task = tasks_.tasks[i];
      if (task.kind == wl::TaskKind::Exchange) continue;
      std::vector<int> deps;
      for (int d : task.deps) {
        if (node_of[static_cast<size_t>(d)] >= 0) deps.push_back(node_of[static_cast<size_t>(d)]);
      }
      if (task.kind == wl::TaskKind::Update) {
        // The tensor's gradient: the backward-weights kernels its Exchange (or, on one GPU, its
        // Update) waits for.
        const wl::Task& after = ranks_ > 1 ? tasks_.tasks[static_cast<size_t>(task.deps.front())] : task;
        Gradient g{static_cast<size_t>(task.tensor), {}};
        for (int d : after.deps) g.ready.push_back(node_of[static_cast<size_t>(d)]);
        gradients_.push_back(std::move(g));
        continue;
      }
      if (last_kernel_ >= 0) deps.push_back(last_kernel_);
      const compute::LayerTimes times = s_.compute->layer_times(task.layer, s_.batch);
      const std::string& layer = s_.workload->layers[static_cast<size_t>(task.layer)].name;
      const auto [verb, seconds] =
          task.kind == wl::TaskKind::Forward ? std::pair{"fwd", times.forward.value}
          : task.kind == wl::TaskKind::BackwardWeights
              ? std::pair{"bwd-weights", times.backward_weights.value}
              : std::pair{"bwd-data", times.backward_data.value};
      node_of[i] = last_kernel_ = kernel(fmt::format("{} {}", verb, layer), seconds, deps);
    }
  }

  // Allreduce methods: the framework's groups, one after another on one stream; DDP's buckets and
  // Horovod's buffers of several tensors copied into a flat buffer and back (replay.cpp,
  // flat_buffer_allreduce).
  void allreduces() {
    std::vector<double> bytes;
    for (const Gradient& g : gradients_) bytes.push_back(bytes_of(g));
    const bool buckets = s_.allreduce.grouping == wl::AllreduceGrouping::Buckets;
    const std::vector<std::vector<int>> groups = wl::allreduce_groups(s_.allreduce, bytes);
    exchanged_.assign(gradients_.size(), {});
    int previous = -1;
    for (size_t k = 0; k < groups.size(); ++k) {
      const std::vector<int>& group = groups[k];
      std::vector<int> deps;
      if (previous >= 0) deps.push_back(previous);
      double total = 0;
      for (int i : group) {
        const Gradient& g = gradients_[static_cast<size_t>(i)];
        deps.insert(deps.end(), g.ready.begin(), g.ready.end());
        total += bytes_of(g);
      }
      const bool flat = s_.allreduce.buffer.value > 0 && (buckets || group.size() > 1);
      const std::string what =
          !buckets && group.size() == 1
              ? name_of(gradients_[static_cast<size_t>(group.front())])
              : fmt::format("{} {} ({} tensors)", buckets ? "bucket" : "buffer", k, group.size());
      const double copy_s = s_.compute->reduction_time(2 * total).value;
      if (flat) deps = {kernel(fmt::format("copy into {}", what), copy_s, deps)};
      previous = add({Kind::Collective, fmt::format("allreduce {}", what), 0,
                      coll::Collective::AllReduce, total, 0, deps});
      if (flat) previous = kernel(fmt::format("copy out of {}", what), copy_s, {previous});
      for (int i : group) exchanged_[static_cast<size_t>(i)] = {previous};
    }
  }

  // MXNet's kvstore=nccl: per key a reduce to GPU0, the update there, a broadcast, each NCCL call
  // after the previous (one op at a time under the allocator's mutex).
  void kvstore_nccl() {
    int previous = -1;
    for (const Gradient& g : gradients_) {
      std::vector<int> deps = g.ready;
      if (previous >= 0) deps.push_back(previous);
      const int reduced = add({Kind::Collective, fmt::format("reduce {}", name_of(g)), 0,
                               coll::Collective::Reduce, bytes_of(g), 0, deps});
      const int updated = update(g, {reduced});
      previous = add({Kind::Collective, fmt::format("broadcast {}", name_of(g)), 0,
                      coll::Collective::Broadcast, bytes_of(g), 0, {updated}});
    }
  }

  int update(const Gradient& g, std::vector<int> deps) {
    const long elements = s_.costs->tensors[g.tensor].elements;
    return kernel(fmt::format("update {}", name_of(g)), s_.compute->update_time(elements).value,
                  std::move(deps));
  }

  // Each weight's update after its exchange, or after every exchange and the last kernel.
  void updates(bool after_every_exchange) {
    std::vector<int> all;
    if (after_every_exchange) {
      for (const std::vector<int>& ends : exchanged_) all.insert(all.end(), ends.begin(), ends.end());
      if (last_kernel_ >= 0) all.push_back(last_kernel_);
    }
    for (size_t i = 0; i < gradients_.size(); ++i) {
      update(gradients_[i], after_every_exchange ? all : exchanged_[i]);
    }
  }

  const ReplaySetup& s_;
  int ranks_;
  wl::IterationGraph tasks_;
  std::vector<double> tensor_bytes_;
  TraceGraph graph_;
  std::vector<Gradient> gradients_;  // in ready order
  std::vector<std::vector<int>> exchanged_;  // [gradient]: the nodes that end its exchange
  int last_kernel_ = -1;
};

}  // namespace

interop::TraceGraph iteration_trace(const ReplaySetup& setup) {
  if (setup.spatial.splits()) {
    throw std::logic_error("iteration_trace: a spatial split has no trace graph");
  }
  return IterationTrace(setup).build();
}

interop::TraceGraph iteration_trace(const Experiment& experiment, const Configuration& config) {
  if (spatial_ways(experiment, config) > 1) {
    throw ConfigError({"--export-chakra", 0},
                      "a run that splits each sample (--spatial) is not exported: its halo "
                      "exchange is not written as Chakra messages; drop --spatial");
  }
  const ReplayInputs inputs(experiment, config);
  return iteration_trace(inputs.setup);
}

}  // namespace gpuscale::sim
