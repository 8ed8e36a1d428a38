#include "sim/collectives/request.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "topologies/core/config_reader.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::coll {
namespace {

[[noreturn]] void bad_request(const std::string& what) {
  throw ConfigError({}, "collective request: " + what);
}

}  // namespace

RingSteps nccl_ring_steps(Collective kind, int ranks, int nodes) {
  const double p = ranks;
  switch (kind) {
    case Collective::AllReduce: return {2 * (ranks - 1), 2 * (nodes - 1), 2 * (p - 1) / p};
    case Collective::AllGather:
    case Collective::ReduceScatter: return {ranks - 1, nodes - 1, (p - 1) / p};
    case Collective::AllToAll: return {1, nodes > 1 ? 1 : 0, 1 / p};
    case Collective::Reduce:
    case Collective::Broadcast: break;
  }
  return {ranks - 1, nodes - 1, 1};
}

void check_request(const CollectiveRequest& r) {
  if (r.ranks < 1) bad_request(fmt::format("ranks must be at least 1 (got {})", r.ranks));
  if (!std::isfinite(r.bytes) || r.bytes < 0) {
    bad_request(fmt::format("bytes must be finite and >= 0 (got {})", r.bytes));
  }
  if (r.root < 0 || r.root >= r.ranks) {
    bad_request(fmt::format("root {} is not a rank (ranks 0..{})", r.root, r.ranks - 1));
  }
  for (std::size_t c = 0; c < r.rings.size(); ++c) {
    const auto& ring = r.rings[c];
    std::vector<bool> seen(static_cast<std::size_t>(r.ranks), false);
    bool ok = static_cast<int>(ring.size()) == r.ranks;
    for (int rank : ring) {
      if (!ok || rank < 0 || rank >= r.ranks || seen[rank]) {
        ok = false;
        break;
      }
      seen[rank] = true;
    }
    if (!ok) {
      bad_request(fmt::format("ring {} is not an order of the {} ranks 0..{} (got [{}])", c,
                              r.ranks, r.ranks - 1, fmt::join(ring, ", ")));
    }
  }
  if (!r.node_of_rank.empty()) {
    if (static_cast<int>(r.node_of_rank.size()) != r.ranks) {
      bad_request(fmt::format("node_of_rank has {} entries for {} ranks", r.node_of_rank.size(),
                              r.ranks));
    }
    for (int node : r.node_of_rank) {
      if (node < 0) bad_request(fmt::format("node_of_rank holds a negative node {}", node));
    }
  }
}

std::vector<std::vector<int>> channel_rings(const CollectiveRequest& r) {
  if (!r.rings.empty()) return r.rings;
  std::vector<int> ring(static_cast<std::size_t>(r.ranks));
  for (int i = 0; i < r.ranks; ++i) ring[i] = i;
  return {ring};
}

std::vector<std::vector<int>> ranks_by_node(const CollectiveRequest& r) {
  std::map<int, std::vector<int>> by_node;
  for (int rank = 0; rank < r.ranks; ++rank) {
    by_node[r.node_of_rank.empty() ? 0 : r.node_of_rank[rank]].push_back(rank);
  }
  std::vector<std::vector<int>> groups;
  for (auto& [node, ranks] : by_node) groups.push_back(std::move(ranks));
  return groups;
}

}  // namespace gpuscale::coll
