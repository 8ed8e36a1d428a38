// Rings (NCCL channels): every ring visits every GPU once over NVLinks, and together the rings
// never use more lanes of a link, in a direction, than it has.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "topologies/src/rings.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::topo {
namespace {

Topology load(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return Topology::build(load_topology_config(name, overrides));
}

void expect_valid_nvlink_rings(const Topology& t, const RingSet& rings) {
  ASSERT_TRUE(rings.over_nvlink);
  std::map<std::pair<int, int>, int> used;  // directed lane use
  for (const auto& ring : rings.rings) {
    EXPECT_EQ(std::set<int>(ring.begin(), ring.end()).size(), t.gpus().size());
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const int a = ring[i], b = ring[(i + 1) % ring.size()];
      ASSERT_TRUE(t.nvlink_between(a, b)) << t.devices()[a].name << "-" << t.devices()[b].name;
      ++used[{a, b}];
    }
  }
  for (const auto& [hop, lanes] : used) {
    EXPECT_LE(lanes, t.links()[*t.nvlink_between(hop.first, hop.second)].lanes);
  }
}

TEST(Rings, Dgx1VoltaPacksSixRingsUsingEveryLaneOnceEachWay) {
  const Topology t = load("dgx1-v100");
  const RingSet rings = find_rings(t);
  expect_valid_nvlink_rings(t, rings);
  // 8 GPUs x 6 lanes each way = 48 directed lanes, 8 per ring.
  EXPECT_EQ(rings.rings.size(), 6u);
}

TEST(Rings, Dgx1PascalPacksFourRings) {
  const Topology t = load("dgx1-p100");
  const RingSet rings = find_rings(t);
  expect_valid_nvlink_rings(t, rings);
  EXPECT_EQ(rings.rings.size(), 4u);
}

TEST(Rings, MaxRingsCapsTheSearch) {
  EXPECT_EQ(find_rings(load("dgx1-v100"), 2).rings.size(), 2u);
}

TEST(Rings, SameMachineSameRings) {
  EXPECT_EQ(find_rings(load("dgx1-v100")).rings, find_rings(load("dgx1-v100")).rings);
}

TEST(Rings, WithoutAnNvlinkRingOneRingFollowsDeclarationOrder) {
  const Topology t = load("sierra-node");
  const RingSet rings = find_rings(t);
  EXPECT_FALSE(rings.over_nvlink);
  ASSERT_EQ(rings.rings.size(), 1u);
  EXPECT_EQ(rings.rings[0], t.gpus());
}

TEST(Rings, ClusterRingsJoinEachNodesChain) {
  const Topology t = load("lassen", {"cluster.nodes=3"});
  const RingSet rings = find_rings(t);
  ASSERT_EQ(rings.rings.size(), 1u);
  EXPECT_EQ(rings.rings[0], t.gpus());  // node 0's GPUs, then node 1's, then node 2's
}

}  // namespace
}  // namespace gpuscale::topo
