// nccl_tree: NCCL's double binary tree allreduce (NCCL >= 2.4), flow-level.
//
// Nodes (ranks grouped by node_of_rank, in increasing node id) are the vertices of two binary
// trees built as NCCL's src/graph/trees.cc does: tree 0 rooted at node 0, where a node's parent
// follows from its lowest set bit; tree 1 its mirror (n - 1 - k) when the node count n is even,
// else tree 0 shifted by one node. Inside a node the ranks form a chain in the order the channel's
// ring visits them; its first rank (the head) carries all the node's network traffic to the parent
// node's head and from the child nodes' heads (NCCL's NCCL_TOPO_PATTERN_TREE).
//
// Each channel's data is split in two halves, one per tree. A tree reduces its half up to the
// root and broadcasts it back down, pipelined chunk by chunk, so each tree edge carries its half
// once upwards and once downwards at the same time. Flow-level: per channel and tree, one flow per
// edge and direction carrying S/(2C) * wire_ratio bytes, the latency paid 2D times, D the tree's
// depth in hops (inter-node depth of a node + its chain length - 1, at the deepest rank), after a
// Delay of NCCL's tree latency. Without contention:
//   T = [tree_base + 2((m-1) hop_intra + floor(log2 n) hop_inter)] + 2 D alpha
//       + S * wire_ratio / (2 C B)
// with m the most ranks on a node. Contention is where this model's bandwidth lives: a head that
// is interior in one tree sends its half up and twice down, plus its half up the other tree, 2S
// per channel over its network link; the replay's flows share that link, as NCCL's own model
// (algorithm bandwidth = bus bandwidth / 2) assumes. NCCL's per-size tree correction factors are
// not modelled. O(C p) ops: 4 C (p-1) flows.
#include <algorithm>

#include "sim/collectives/algorithms.hpp"

namespace gpuscale::coll {
namespace {

// NCCL's binary tree over n vertices: the parent of vertex k > 0, from its lowest set bit.
int btree_parent(int n, int k) {
  if (k == 0) return -1;
  const int bit = k & -k;
  const int up = (k ^ bit) | (bit << 1);
  return up < n ? up : (k ^ bit);
}

// The parent of vertex k in tree 0 or tree 1 of the double binary tree.
int dtree_parent(int n, int k, int tree) {
  if (tree == 0) return btree_parent(n, k);
  if (n % 2 == 1) {
    const int up = btree_parent(n, (k - 1 + n) % n);
    return up < 0 ? -1 : (up + 1) % n;
  }
  const int up = btree_parent(n, n - 1 - k);
  return up < 0 ? -1 : n - 1 - up;
}

std::vector<int> depths(const std::vector<int>& parent) {
  const int n = static_cast<int>(parent.size());
  std::vector<int> depth(n, -1);
  for (int k = 0; k < n; ++k) {
    int hops = 0;
    for (int at = k; parent[at] >= 0; at = parent[at]) ++hops;
    depth[k] = hops;
  }
  return depth;
}

}  // namespace

Schedule build_nccl_tree(const CollectiveRequest& r) {
  ScheduleBuilder b("nccl_tree", r);
  const auto groups = ranks_by_node(r);
  const auto rings = channel_rings(r);
  const int n = static_cast<int>(groups.size());
  int most_per_node = 0;
  for (const auto& g : groups) most_per_node = std::max(most_per_node, static_cast<int>(g.size()));

  std::vector<int> node_index(static_cast<std::size_t>(r.ranks));
  for (int k = 0; k < n; ++k) {
    for (int rank : groups[k]) node_index[rank] = k;
  }

  const std::vector<int> start = b.gate(r.protocol.tree_latency_s(most_per_node, n), {});
  const double bytes = r.bytes / (2.0 * rings.size()) * r.protocol.wire_ratio;
  b.reserve(rings.size() * 4 * static_cast<std::size_t>(r.ranks));  // two trees, both ways
  for (const auto& ring : rings) {
    std::vector<std::vector<int>> chains(n);  // each node's ranks in this ring's order
    for (int rank : ring) chains[node_index[rank]].push_back(rank);
    for (int tree = 0; tree < 2; ++tree) {
      std::vector<int> parent(n);
      for (int k = 0; k < n; ++k) parent[k] = dtree_parent(n, k, tree);
      const std::vector<int> depth = depths(parent);
      int deepest = 0;
      for (int k = 0; k < n; ++k) {
        deepest = std::max(deepest, depth[k] + static_cast<int>(chains[k].size()) - 1);
      }
      const int steps = 2 * deepest;
      for (int k = 0; k < n; ++k) {
        const auto& chain = chains[k];
        if (parent[k] >= 0) {
          const int head = chain.front(), parent_head = chains[parent[k]].front();
          b.transfer(head, parent_head, bytes, steps, start);
          b.transfer(parent_head, head, bytes, steps, start);
        }
        for (std::size_t i = 1; i < chain.size(); ++i) {
          b.transfer(chain[i], chain[i - 1], bytes, steps, start);
          b.transfer(chain[i - 1], chain[i], bytes, steps, start);
        }
      }
    }
  }
  Schedule s = b.finish();
  // Every flow starts after the one Delay and carries the same bytes: the flows end when the
  // slowest does, so the replay may evaluate them from link loads (docs/collectives.md,
  // "Lock-step schedules at scale").
  s.lock_step = true;
  return s;
}

}  // namespace gpuscale::coll
