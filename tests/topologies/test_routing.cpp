// Routes under each routing mode on the DGX-1 (brief §2-3): NVLink when present, two-hop through
// a GPU linked to both ends, host staging across sockets, PCIe only; cut-through costs add up
// link and switch latencies; routes are symmetric and deterministic; cluster routes climb the
// fat tree only as far as needed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "topologies/src/routing.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::topo {
namespace {

using ::testing::ElementsAre;

class Dgx1Routing : public ::testing::Test {
 protected:
  Topology t = Topology::build(load_topology_config("dgx1-v100"));

  int dev(const std::string& name) const { return *t.find_device(name); }
  std::vector<std::string> path(const Leg& leg) const {
    std::vector<std::string> out;
    for (int d : leg.devices) out.push_back(t.devices()[d].name);
    return out;
  }
  double latency_of(LinkKind kind) const {
    for (const Link& l : t.links()) {
      if (l.kind == kind) return l.latency.value;
    }
    return -1;
  }
};

TEST_F(Dgx1Routing, TwelveUnlinkedPairsEachGetATwoHopRouteOverNvlink) {
  const Router router(t, RoutingMode::TwoHopGpu);
  int two_hop = 0;
  for (int a : t.gpus()) {
    for (int b : t.gpus()) {
      if (a >= b) continue;
      const Route r = router.route(a, b);
      if (t.nvlink_between(a, b)) {
        EXPECT_EQ(r.kind, RouteKind::NvLink);
        continue;
      }
      ++two_hop;
      ASSERT_EQ(r.kind, RouteKind::TwoHopGpu);
      ASSERT_EQ(r.legs.size(), 2u);
      const int via = r.legs[0].dst();
      EXPECT_EQ(t.devices()[via].kind, DeviceKind::Gpu);
      EXPECT_TRUE(t.nvlink_between(a, via) && t.nvlink_between(via, b));
      EXPECT_EQ(r.legs[1].src(), via);
    }
  }
  EXPECT_EQ(two_hop, 12);
}

TEST_F(Dgx1Routing, TwoHopPicksTheWidestNarrowerLeg) {
  // gpu0 -> gpu7: through gpu4 both legs are double links (48 GB/s); through gpu3 one is single.
  const Route r = Router(t, RoutingMode::TwoHopGpu).route(dev("gpu0"), dev("gpu7"));
  EXPECT_EQ(t.devices()[r.legs[0].dst()].name, "gpu4");
  EXPECT_DOUBLE_EQ(r.legs[0].bandwidth(t).value, 2 * 25e9 * 0.96);
}

TEST_F(Dgx1Routing, DirectCutsThroughPcieAndQpiWithoutCrossingGpus) {
  const Route r = Router(t, RoutingMode::Direct).route(dev("gpu0"), dev("gpu5"));
  ASSERT_EQ(r.kind, RouteKind::P2p);
  ASSERT_EQ(r.legs.size(), 1u);
  EXPECT_THAT(path(r.legs[0]), ElementsAre("gpu0", "plx0", "cpu0", "cpu1", "plx2", "gpu5"));
  // Four PCIe hops, one QPI hop, and two switch crossings (100 ns each).
  const double expected = 4 * latency_of(LinkKind::Pcie) + latency_of(LinkKind::Qpi) + 2 * 100e-9;
  EXPECT_NEAR(r.legs[0].latency(t).value, expected, 1e-15);
  EXPECT_DOUBLE_EQ(r.legs[0].bandwidth(t).value, 16 * 0.985e9 * 0.76);
}

TEST_F(Dgx1Routing, HostStagedCopiesToTheSourceSocketThenFetches) {
  const Router router(t, RoutingMode::HostStaged);
  const Route cross = router.route(dev("gpu0"), dev("gpu5"));
  ASSERT_EQ(cross.kind, RouteKind::HostStaged);
  ASSERT_EQ(cross.legs.size(), 2u);
  EXPECT_THAT(path(cross.legs[0]), ElementsAre("gpu0", "plx0", "cpu0"));
  EXPECT_THAT(path(cross.legs[1]), ElementsAre("cpu0", "cpu1", "plx2", "gpu5"));
  EXPECT_EQ(router.route(dev("gpu0"), dev("gpu1")).kind, RouteKind::NvLink);
}

TEST_F(Dgx1Routing, PcieModeIgnoresNvlink) {
  const Router router(t, RoutingMode::Pcie);
  const Route same_switch = router.route(dev("gpu0"), dev("gpu1"));
  EXPECT_EQ(same_switch.kind, RouteKind::P2p);
  EXPECT_THAT(path(same_switch.legs[0]), ElementsAre("gpu0", "plx0", "gpu1"));
  EXPECT_THAT(path(router.route(dev("gpu0"), dev("gpu2")).legs[0]),
              ElementsAre("gpu0", "plx0", "cpu0", "plx1", "gpu2"));
}

TEST_F(Dgx1Routing, RoutesAreSymmetricAndDeterministic) {
  for (RoutingMode mode : {RoutingMode::Direct, RoutingMode::TwoHopGpu, RoutingMode::HostStaged,
                           RoutingMode::Pcie}) {
    const Router first(t, mode), second(t, mode);
    for (int a : t.gpus()) {
      for (int b : t.gpus()) {
        if (a == b) continue;
        std::vector<int> forward = first.route(a, b).devices();
        std::vector<int> backward = first.route(b, a).devices();
        std::reverse(backward.begin(), backward.end());
        EXPECT_EQ(forward, backward) << to_string(mode);
        EXPECT_EQ(forward, second.route(a, b).devices());
      }
    }
  }
}

TEST_F(Dgx1Routing, HopsFollowTheirLinksDirections) {
  const Route r = Router(t, RoutingMode::Direct).route(dev("gpu5"), dev("gpu0"));
  const Leg& leg = r.legs[0];
  for (std::size_t h = 0; h < leg.hops.size(); ++h) {
    const Link& l = t.links()[leg.hops[h].link];
    EXPECT_EQ(leg.hops[h].forward ? l.a : l.b, leg.devices[h]);
    EXPECT_EQ(leg.hops[h].forward ? l.b : l.a, leg.devices[h + 1]);
  }
}

TEST(ClusterRouting, NodesOnOneLeafSkipTheSpinesAndFarNodesClimbToOne) {
  const Topology t = Topology::build(load_topology_config("lassen", {"cluster.nodes=128"}));
  const Router router(t, t.default_routing());
  const int per_node = t.fabric()->devices_per_node;
  auto kinds_on = [&](const Route& r) {
    int leaves = 0, spines = 0;
    for (int d : r.devices()) {
      leaves += t.devices()[d].name.find(".leaf") != std::string::npos;
      spines += t.devices()[d].name.find(".spine") != std::string::npos;
    }
    return std::pair{leaves, spines};
  };
  const int g = t.gpus()[0];
  EXPECT_EQ(kinds_on(router.route(g, g + per_node)), (std::pair{1, 0}));         // node 1, same leaf
  EXPECT_EQ(kinds_on(router.route(g, g + 127 * per_node)), (std::pair{2, 1}));   // node 127
  // Destination-based spine choice spreads traffic: node 30 and node 31 use different spines.
  auto spine_of = [&](const Route& r) {
    for (int d : r.devices()) {
      if (t.devices()[d].name.find(".spine") != std::string::npos) return t.devices()[d].name;
    }
    return std::string();
  };
  EXPECT_NE(spine_of(router.route(g, g + 30 * per_node)), spine_of(router.route(g, g + 31 * per_node)));
}

TEST(ClusterRouting, FatTreeSizesFollowRadixAndTaper) {
  // 36-port switches at 2:1: 24 nodes per leaf, 12 up-links; 128 nodes -> 6 leaves, 2 spines of
  // 36 ports, 6 cables (24 lanes) per leaf-spine trunk.
  const Topology t = Topology::build(
      load_topology_config("lassen", {"cluster.nodes=128", "cluster.network.rails=1"}));
  const Fabric::Rail& rail = t.fabric()->rails[0];
  EXPECT_EQ(rail.leaf_device.size(), 6u);
  EXPECT_EQ(rail.spine_device.size(), 2u);
  EXPECT_EQ(t.links()[rail.trunk[0][0]].lanes, 6 * 4);
}

// Beyond a two-level tree's 36 x 24 = 864 nodes, Lassen's rails grow a third level: pods of 18
// leaves (432 nodes) with 12 spines each, spine a of every pod joined to the 18 cores of group a.
TEST(ClusterRouting, ALargerClusterGrowsAThirdLevelOfCores) {
  const Topology t = Topology::build(
      load_topology_config("lassen", {"cluster.nodes=1000", "cluster.network.rails=1"}));
  const Fabric& f = *t.fabric();
  EXPECT_EQ(f.leaves_per_pod, 18);
  EXPECT_EQ(f.spines_per_pod, 12);
  EXPECT_EQ(f.cores_per_group, 18);
  const Fabric::Rail& rail = f.rails[0];
  EXPECT_EQ(rail.leaf_device.size(), 42u);        // ceil(1000 / 24)
  EXPECT_EQ(rail.spine_device.size(), 3u * 12);   // 3 pods
  EXPECT_EQ(rail.core_device.size(), 12u * 18);
  // Every switch uses at most its 36 ports (4 lanes each): count the lanes on each.
  std::map<int, int> lanes;
  for (const Link& l : t.links()) {
    lanes[l.a] += l.lanes;
    lanes[l.b] += l.lanes;
  }
  for (const auto& [device, used] : lanes) {
    if (t.devices()[device].kind == DeviceKind::NetworkSwitch) {
      EXPECT_LE(used, 36 * 4) << t.devices()[device].name;
    }
  }
  // A spine's ports split evenly: 18 leaves below, 18 cores above.
  EXPECT_EQ(lanes[rail.spine_device[0]], 36 * 4);

  const Router router(t, t.default_routing());
  const int per_node = f.devices_per_node;
  auto switches_on = [&](const Route& r) {
    std::vector<std::string> names;
    for (int d : r.devices()) {
      if (t.devices()[d].kind == DeviceKind::NetworkSwitch) names.push_back(t.devices()[d].name);
    }
    return names;
  };
  const int g = t.gpus()[0];
  EXPECT_EQ(switches_on(router.route(g, g + 30 * per_node)).size(), 3u);  // same pod
  // Node 999: leaf 41 of pod 2; spine 999 mod 12 = 3, core (999 / 12) mod 18 = 11 of group 3.
  EXPECT_EQ(switches_on(router.route(g, g + 999 * per_node)),
            (std::vector<std::string>{"r0.leaf0", "r0.pod0.spine3", "r0.core65", "r0.pod2.spine3",
                                      "r0.leaf41"}));
}

TEST(ClusterRouting, TwoLevelsThatCannotHoldTheNodesIsAnErrorNamingLevels) {
  try {
    load_topology_config("lassen", {"cluster.nodes=1000", "cluster.network.levels=2"});
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("1000 nodes exceed what a 2-level fat tree of "
                                               "radix 36 and taper 2 holds (864 nodes; set "
                                               "levels: 3"));
  }
}

}  // namespace
}  // namespace gpuscale::topo
