#include "sim/exchange/exchange_trace.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscale::sim {

using interop::TraceNode;

int ExchangeTrace::add(TraceNode node) {
  std::sort(node.deps.begin(), node.deps.end());
  node.deps.erase(std::unique(node.deps.begin(), node.deps.end()), node.deps.end());
  graph.nodes.push_back(std::move(node));
  return static_cast<int>(graph.nodes.size()) - 1;
}

int ExchangeTrace::kernel(std::string name, double seconds, std::vector<int> deps) {
  return add({TraceNode::Kind::Compute, std::move(name), seconds, wl::Collective::AllReduce, 0, 0,
              std::move(deps)});
}

int ExchangeTrace::collective(std::string name, wl::Collective kind, double bytes,
                              std::vector<int> deps) {
  return add({TraceNode::Kind::Collective, std::move(name), 0, kind, bytes, 0, std::move(deps)});
}

int ExchangeTrace::update(const Gradient& g, std::vector<int> deps) {
  const long elements = costs_.tensors[g.tensor].elements;
  return kernel(fmt::format("update {}", name_of(g)), compute_.update_time(elements).value,
                std::move(deps));
}

void ExchangeTrace::updates(const std::vector<std::vector<int>>& exchanged,
                            bool after_every_exchange) {
  std::vector<int> all;
  if (after_every_exchange) {
    for (const std::vector<int>& ends : exchanged) all.insert(all.end(), ends.begin(), ends.end());
    if (last_kernel >= 0) all.push_back(last_kernel);
  }
  for (size_t i = 0; i < gradients_.size(); ++i) {
    update(gradients_[i], after_every_exchange ? all : exchanged[i]);
  }
}

}  // namespace gpuscale::sim
