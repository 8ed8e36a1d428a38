#include "workloads/src/iteration_graph.hpp"

#include <stdexcept>

namespace gpuscale::wl {

const char* to_string(TaskKind kind) {
  switch (kind) {
    case TaskKind::Forward: return "forward";
    case TaskKind::BackwardWeights: return "backward_weights";
    case TaskKind::BackwardData: return "backward_data";
    case TaskKind::Exchange: return "exchange";
    case TaskKind::Update: return "update";
  }
  return "?";
}

IterationGraph build_iteration_graph(const Workload& w, const WorkloadCosts& costs, int gpus) {
  if (gpus < 1) throw std::invalid_argument("build_iteration_graph: need at least one GPU");
  IterationGraph g;
  g.gpus = gpus;
  const size_t n = w.layers.size();
  auto add = [&g](Task task) {
    g.tasks.push_back(std::move(task));
    return static_cast<int>(g.tasks.size()) - 1;
  };

  std::vector<int> forward(n, -1);
  std::vector<std::vector<int>> consumers(n);
  for (size_t i = 1; i < n; ++i) {
    Task t{TaskKind::Forward, static_cast<int>(i), -1, {}};
    for (int input : w.layers[i].inputs) {
      consumers[static_cast<size_t>(input)].push_back(static_cast<int>(i));
      if (forward[static_cast<size_t>(input)] >= 0) t.deps.push_back(forward[static_cast<size_t>(input)]);
    }
    forward[i] = add(std::move(t));
  }

  // A layer's backward needs the gradient of its output: the backward-data tasks of all its
  // consumers, or, for the last layer (the loss), its own forward.
  std::vector<int> backward_data(n, -1);
  std::vector<int> backward_weights(n, -1);
  for (size_t i = n - 1; i >= 1; --i) {
    const LayerCost& c = costs.layers[i];
    if (!c.has_backward_data && !c.has_backward_weights) continue;
    std::vector<int> output_gradient;
    for (int consumer : consumers[i]) {
      output_gradient.push_back(backward_data[static_cast<size_t>(consumer)]);
    }
    if (consumers[i].empty()) output_gradient.push_back(forward[i]);
    if (c.has_backward_weights) {
      backward_weights[i] = add({TaskKind::BackwardWeights, static_cast<int>(i), -1, output_gradient});
    }
    if (c.has_backward_data) {
      backward_data[i] = add({TaskKind::BackwardData, static_cast<int>(i), -1, output_gradient});
    }
  }

  // Gradient exchange and update per tensor, in the order gradients become ready. A tied
  // weight's gradient is ready once every layer that uses it has added its part.
  for (size_t i = n - 1; i >= 1; --i) {
    if (backward_weights[i] < 0) continue;
    std::vector<int> computed = {backward_weights[i]};
    for (size_t j = 1; j < n; ++j) {
      if (w.layers[j].shares == static_cast<int>(i)) computed.push_back(backward_weights[j]);
    }
    for (size_t t = 0; t < costs.tensors.size(); ++t) {
      if (costs.tensors[t].layer != static_cast<int>(i)) continue;
      std::vector<int> ready = computed;
      if (gpus > 1) {
        ready = {add({TaskKind::Exchange, static_cast<int>(i), static_cast<int>(t), ready})};
      }
      add({TaskKind::Update, static_cast<int>(i), static_cast<int>(t), ready});
    }
  }
  return g;
}

}  // namespace gpuscale::wl
