#include "topologies/src/rings.hpp"

#include <algorithm>
#include <numeric>
#include <set>

namespace gpuscale::topo {
namespace {

// Bounds both searches on large, dense NVLink graphs; node-sized graphs (4-16 GPUs as built)
// finish far below them. Past a bound the best packing found so far is kept.
constexpr long kMaxCycles = 20'000;
constexpr long kPackingSteps = 2'000'000;

using Lanes = std::vector<std::vector<int>>;  // [i][j]: NVLink lanes from GPU i to GPU j

// Every directed Hamiltonian cycle through GPU 0, trying links with more lanes first, then the
// lower GPU index.
class CycleEnumerator {
 public:
  explicit CycleEnumerator(const Lanes& lanes) : lanes_(lanes), visited_(lanes.size(), false) {}

  std::vector<std::vector<int>> run() {
    path_ = {0};
    visited_[0] = true;
    extend();
    return std::move(cycles_);
  }

 private:
  void extend() {
    const int n = static_cast<int>(lanes_.size());
    const int last = path_.back();
    if (static_cast<int>(cycles_.size()) >= kMaxCycles) return;
    if (static_cast<int>(path_.size()) == n) {
      if (lanes_[last][0] > 0) cycles_.push_back(path_);
      return;
    }
    std::vector<int> next;
    for (int j = 0; j < n; ++j) {
      if (!visited_[j] && lanes_[last][j] > 0) next.push_back(j);
    }
    std::stable_sort(next.begin(), next.end(),
                     [&](int x, int y) { return lanes_[last][x] > lanes_[last][y]; });
    for (int j : next) {
      path_.push_back(j);
      visited_[j] = true;
      extend();
      visited_[j] = false;
      path_.pop_back();
    }
  }

  const Lanes& lanes_;
  std::vector<bool> visited_;
  std::vector<int> path_;
  std::vector<std::vector<int>> cycles_;
};

// The largest multiset of cycles whose lane use fits the links (branch and bound; a ring uses n
// directed lanes, so the lanes left bound how many more rings fit).
class RingPacker {
 public:
  RingPacker(Lanes lanes, std::vector<std::vector<int>> cycles, int max_rings)
      : lanes_(std::move(lanes)), cycles_(std::move(cycles)), max_rings_(max_rings) {
    for (const auto& row : lanes_) lanes_left_ += std::accumulate(row.begin(), row.end(), 0L);
  }

  std::vector<std::vector<int>> run() {
    search(0);
    std::vector<std::vector<int>> rings;
    for (int c : best_) rings.push_back(cycles_[c]);
    return rings;
  }

 private:
  bool fits(int c) const {
    const auto& cycle = cycles_[c];
    for (std::size_t i = 0; i < cycle.size(); ++i) {
      if (lanes_[cycle[i]][cycle[(i + 1) % cycle.size()]] <= 0) return false;
    }
    return true;
  }

  void take(int c, int delta) {
    const auto& cycle = cycles_[c];
    for (std::size_t i = 0; i < cycle.size(); ++i) lanes_[cycle[i]][cycle[(i + 1) % cycle.size()]] -= delta;
    lanes_left_ -= delta * static_cast<long>(cycle.size());
  }

  void search(std::size_t first) {
    if (chosen_.size() > best_.size()) best_ = chosen_;
    const long n = static_cast<long>(lanes_.size());
    const long bound = static_cast<long>(chosen_.size()) + lanes_left_ / n;
    if (static_cast<int>(best_.size()) >= max_rings_ || bound <= static_cast<long>(best_.size()) ||
        --steps_ < 0) {
      return;
    }
    for (std::size_t c = first; c < cycles_.size(); ++c) {
      if (!fits(static_cast<int>(c))) continue;
      take(static_cast<int>(c), 1);
      chosen_.push_back(static_cast<int>(c));
      search(c);  // the same cycle may be taken again while lanes last
      chosen_.pop_back();
      take(static_cast<int>(c), -1);
      if (static_cast<int>(best_.size()) >= max_rings_) return;
    }
  }

  Lanes lanes_;
  std::vector<std::vector<int>> cycles_;
  int max_rings_;
  long lanes_left_ = 0;
  long steps_ = kPackingSteps;
  std::vector<int> chosen_, best_;
};

// Every GPU of `node_gpus` has a link to an NVSwitch (DGX-2, DGX A100, DGX H100): NCCL's
// search then finds rings through the switch in any GPU order.
bool on_one_nvswitch_fabric(const Topology& topology, const std::vector<int>& node_gpus) {
  return std::all_of(node_gpus.begin(), node_gpus.end(),
                     [&](int gpu) { return topology.nvswitch_bandwidth(gpu) > 0; });
}

}  // namespace

RingSet find_rings(const Topology& topology, int max_rings, int gpus_per_node, int nodes_used,
                   const Router* router) {
  std::vector<int> node_gpus;  // node 0's GPUs, in declaration order
  for (int g : topology.gpus()) {
    if (topology.devices()[g].node == 0) node_gpus.push_back(g);
  }
  if (gpus_per_node > 0 && gpus_per_node < static_cast<int>(node_gpus.size())) {
    node_gpus.resize(static_cast<size_t>(gpus_per_node));
  }
  const int n = static_cast<int>(node_gpus.size());

  RingSet result;
  std::vector<std::vector<int>> node_rings;  // positions in node_gpus
  if (n > 1) {
    std::vector<std::vector<int>> lanes(n, std::vector<int>(n, 0));
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        if (const auto k = topology.nvlink_between(node_gpus[i], node_gpus[j])) {
          lanes[i][j] = topology.links()[*k].lanes;
        }
      }
    }
    std::vector<std::vector<int>> cycles = CycleEnumerator(lanes).run();
    node_rings = RingPacker(std::move(lanes), std::move(cycles), max_rings).run();
  }
  result.over_nvlink = !node_rings.empty();
  const int nodes = nodes_used > 0 ? std::min(nodes_used, topology.nodes()) : topology.nodes();
  if (node_rings.empty() && n > 1 && on_one_nvswitch_fabric(topology, node_gpus)) {
    // Every pair equally close: the order is free, and each rotation is opened at another GPU.
    // Across nodes, one per rail its chain leaves through; on one node, one per GPU.
    std::set<int> rails;
    for (int last = n - 1; last >= 0 && static_cast<int>(node_rings.size()) < max_rings; --last) {
      std::vector<int> rotation(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) rotation[static_cast<size_t>(i)] = (last + 1 + i) % n;
      if (router != nullptr && nodes > 1) {
        const int rail = router->nearest_rail(node_gpus[static_cast<size_t>(last)]);
        if (!rails.insert(rail).second) continue;
      }
      node_rings.push_back(std::move(rotation));
    }
  }
  if (node_rings.empty()) {
    std::vector<int> in_order(n);
    std::iota(in_order.begin(), in_order.end(), 0);
    node_rings.push_back(in_order);
    // Across nodes, one ring per NIC: the reversed chain where it leaves through another rail.
    if (router != nullptr && nodes > 1 && n > 1) {
      const auto exit_rail = [&](const std::vector<int>& chain) {
        return router->nearest_rail(node_gpus[static_cast<size_t>(chain.back())]);
      };
      std::vector<int> reversed(in_order.rbegin(), in_order.rend());
      const int forward_rail = exit_rail(in_order), reversed_rail = exit_rail(reversed);
      const bool another_rail =
          forward_rail >= 0 && reversed_rail >= 0 && forward_rail != reversed_rail;
      if (max_rings > 1 && another_rail) {
        node_rings.push_back(std::move(reversed));
      }
    }
  }

  const int stride = topology.fabric() ? topology.fabric()->devices_per_node : 0;
  for (const auto& node_ring : node_rings) {
    std::vector<int> ring;
    for (int node = 0; node < nodes; ++node) {
      for (int position : node_ring) ring.push_back(node_gpus[position] + node * stride);
    }
    result.rings.push_back(std::move(ring));
  }
  return result;
}

}  // namespace gpuscale::topo
