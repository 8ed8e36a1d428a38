#include "sim/trace/iteration_trace.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "sim/exchange/exchange_trace.hpp"
#include "sim/experiment/replay_inputs.hpp"
#include "topologies/core/error.hpp"
#include "workloads/src/iteration_graph.hpp"

namespace gpuscale::sim {
namespace {

// Every forward and backward kernel in the stream's order into `trace`, and the gradients in
// ready order.
void add_kernels(const ReplaySetup& s, int ranks, ExchangeTrace& trace) {
  const wl::IterationGraph tasks = wl::build_iteration_graph(*s.workload, *s.costs, ranks);
  std::vector<int> node_of(tasks.tasks.size(), -1);
  for (size_t i = 0; i < tasks.tasks.size(); ++i) {
    const wl::Task& task = tasks.tasks[i];
    if (task.kind == wl::TaskKind::Exchange) continue;
    std::vector<int> deps;
    for (int d : task.deps) {
      if (node_of[static_cast<size_t>(d)] >= 0) deps.push_back(node_of[static_cast<size_t>(d)]);
    }
    if (task.kind == wl::TaskKind::Update) {
      // The tensor's gradient: the backward-weights kernels its Exchange (or, on one GPU, its
      // Update) waits for.
      const wl::Task& after = ranks > 1 ? tasks.tasks[static_cast<size_t>(task.deps.front())] : task;
      ExchangeTrace::Gradient g{static_cast<size_t>(task.tensor), {}};
      for (int d : after.deps) g.ready.push_back(node_of[static_cast<size_t>(d)]);
      trace.add_gradient(std::move(g));
      continue;
    }
    if (trace.last_kernel >= 0) deps.push_back(trace.last_kernel);
    const compute::LayerTimes times = s.compute->layer_times(task.layer, s.batch);
    const std::string& layer = s.workload->layers[static_cast<size_t>(task.layer)].name;
    const auto [verb, seconds] =
        task.kind == wl::TaskKind::Forward ? std::pair{"fwd", times.forward.value}
        : task.kind == wl::TaskKind::BackwardWeights
            ? std::pair{"bwd-weights", times.backward_weights.value}
            : std::pair{"bwd-data", times.backward_data.value};
    node_of[i] = trace.last_kernel = trace.kernel(fmt::format("{} {}", verb, layer), seconds, deps);
  }
}

}  // namespace

interop::TraceGraph iteration_trace(const ReplaySetup& s, const ExchangeMethod& method,
                                    const std::string& exchange) {
  if (s.halo != nullptr) throw std::logic_error("iteration_trace: a spatial split has no trace graph");
  const int ranks = static_cast<int>(s.gpus.size());
  const double element = s.precision->gradient_bytes;
  std::vector<double> tensor_bytes;
  for (const wl::ParamTensor& t : s.costs->tensors) tensor_bytes.push_back(t.elements * element);
  ExchangeTrace trace(*s.costs, *s.compute, std::move(tensor_bytes), ranks);
  trace.graph.source = fmt::format("gpuscale run: {} at batch {} per GPU on {} GPUs of {}, comm {}, "
                                   "framework {}",
                                   s.workload->name, s.batch, ranks, s.topology->name(), exchange,
                                   s.framework->name);
  add_kernels(s, ranks, trace);
  method.export_trace(trace);
  return std::move(trace.graph);
}

interop::TraceGraph iteration_trace(const Experiment& experiment, const Configuration& config) {
  if (spatial_ways(experiment, config) > 1) {
    throw ConfigError({"--export-chakra", 0},
                      "a run that splits each sample (--spatial) is not exported: its halo "
                      "exchange is not written as Chakra messages; drop --spatial");
  }
  const ReplayInputs inputs(experiment, config);
  return iteration_trace(inputs.setup, *inputs.exchange, inputs.exchange_choice.name);
}

}  // namespace gpuscale::sim
