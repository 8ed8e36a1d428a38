// The shipped machines load, validate and route, and match the facts of ../shared/brief.md:
// the DGX-1V NVLink matrix (§2), the P100 cube (§2), the C4140 configurations (§4), Sierra
// nodes (§5) and a 512-GPU Lassen.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topologies/src/rings.hpp"
#include "topologies/src/routing.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::topo {
namespace {

Topology load(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return Topology::build(load_topology_config(name, overrides));
}


int gpu(const Topology& t, const std::string& name) { return *t.find_device(name); }

int nvlink_lanes(const Topology& t, int a, int b) {
  const auto k = t.nvlink_between(a, b);
  return k ? t.links()[*k].lanes : 0;
}

// brief §2: `nvidia-smi topo -m` on a DGX-1 with V100.
constexpr int kDgx1VoltaNvlinks[8][8] = {
    {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0},
    {2, 1, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
    {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0},
};

TEST(ShippedMachines, EveryMachineLoadsValidatesAndRoutesInEveryMode) {
  const auto names = shipped_topologies().names();
  for (const char* expected : {"dgx1-v100", "dgx1-p100", "c4140-b", "c4140-k", "c4140-m",
                               "dss8440", "sierra-node", "lassen"}) {
    EXPECT_THAT(names, ::testing::Contains(expected));
  }
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const Topology t = load(name);
    EXPECT_FALSE(t.description().empty());
    Router(t, t.default_routing()).check_all_pairs();
    EXPECT_FALSE(find_rings(t).rings.empty());
  }
}

TEST(ShippedMachines, Dgx1VoltaHasTheExactNvlinkMatrix) {
  const Topology t = load("dgx1-v100");
  ASSERT_EQ(t.gpus().size(), 8u);
  for (int i = 0; i < 8; ++i) {
    int lanes = 0;
    for (int j = 0; j < 8; ++j) {
      const int got = nvlink_lanes(t, t.gpus()[i], t.gpus()[j]);
      EXPECT_EQ(got, kDgx1VoltaNvlinks[i][j]) << "gpu" << i << "-gpu" << j;
      lanes += got;
      if (got > 0) {
        EXPECT_DOUBLE_EQ(t.links()[*t.nvlink_between(t.gpus()[i], t.gpus()[j])].bandwidth.value,
                         got * 25e9);
      }
    }
    EXPECT_EQ(lanes, 6) << "every V100 uses its 6 NVLink2 ports";
  }
}

TEST(ShippedMachines, Dgx1VoltaPcieTreeAndSockets) {
  const Topology t = load("dgx1-v100");
  int switches = 0, nics = 0, cpus = 0;
  for (const Device& d : t.devices()) {
    switches += d.kind == DeviceKind::PcieSwitch;
    nics += d.kind == DeviceKind::Nic;
    cpus += d.kind == DeviceKind::Cpu;
  }
  EXPECT_EQ(switches, 4);
  EXPECT_EQ(nics, 4);
  EXPECT_EQ(cpus, 2);
  // GPU pairs (0,1) (2,3) (4,5) (6,7) share a switch: a PCIe route between them crosses one.
  const Router pcie(t, RoutingMode::Pcie);
  for (int pair = 0; pair < 4; ++pair) {
    const Route r = pcie.route(gpu(t, fmt::format("gpu{}", 2 * pair)),
                               gpu(t, fmt::format("gpu{}", 2 * pair + 1)));
    ASSERT_EQ(r.devices().size(), 3u);
    EXPECT_EQ(t.devices()[r.devices()[1]].kind, DeviceKind::PcieSwitch);
  }
}

TEST(ShippedMachines, Dgx1PascalIsTheSameCubeWithOneNvlink1PerEdge) {
  const Topology v = load("dgx1-v100");
  const Topology p = load("dgx1-p100");
  for (int i = 0; i < 8; ++i) {
    int lanes = 0;
    for (int j = 0; j < 8; ++j) {
      const int volta = nvlink_lanes(v, v.gpus()[i], v.gpus()[j]);
      const int pascal = nvlink_lanes(p, p.gpus()[i], p.gpus()[j]);
      EXPECT_EQ(pascal, volta > 0 ? 1 : 0);
      if (pascal > 0) {
        EXPECT_DOUBLE_EQ(p.links()[*p.nvlink_between(p.gpus()[i], p.gpus()[j])].bandwidth.value,
                         20e9);
      }
      lanes += pascal;
    }
    EXPECT_EQ(lanes, 4);
  }
}

TEST(ShippedMachines, C4140NvlinkConfigurationsLinkEveryPairTwice) {
  for (const char* name : {"c4140-k", "c4140-m"}) {
    SCOPED_TRACE(name);
    const Topology t = load(name);
    ASSERT_EQ(t.gpus().size(), 4u);
    for (int a : t.gpus()) {
      for (int b : t.gpus()) {
        if (a != b) {
          EXPECT_EQ(nvlink_lanes(t, a, b), 2);
        }
      }
    }
    // brief §4: NCCL found 6 rings on the C4140-K.
    EXPECT_EQ(find_rings(t).rings.size(), 6u);
  }
}

TEST(ShippedMachines, C4140BAndDss8440HaveNoNvlinkAndRouteOverPcie) {
  for (const char* name : {"c4140-b", "dss8440"}) {
    SCOPED_TRACE(name);
    const Topology t = load(name);
    for (const Link& l : t.links()) EXPECT_NE(l.kind, LinkKind::NvLink);
    const Router router(t, RoutingMode::Direct);
    EXPECT_EQ(router.route(t.gpus()[0], t.gpus()[1]).kind, RouteKind::P2p);
    const RingSet rings = find_rings(t);
    EXPECT_FALSE(rings.over_nvlink);
    EXPECT_EQ(rings.rings.size(), 1u);
  }
  EXPECT_EQ(load("c4140-b").gpus().size(), 4u);
  EXPECT_EQ(load("dss8440").gpus().size(), 8u);
}

TEST(ShippedMachines, SierraNodeHasTwoNvlinkIslandsOfThreeBricks) {
  const Topology t = load("sierra-node");
  ASSERT_EQ(t.gpus().size(), 4u);
  EXPECT_EQ(nvlink_lanes(t, t.gpus()[0], t.gpus()[1]), 3);
  EXPECT_EQ(nvlink_lanes(t, t.gpus()[2], t.gpus()[3]), 3);
  EXPECT_EQ(nvlink_lanes(t, t.gpus()[0], t.gpus()[2]), 0);
  EXPECT_DOUBLE_EQ(t.links()[*t.nvlink_between(t.gpus()[0], t.gpus()[1])].bandwidth.value, 75e9);
  // Each GPU reaches its socket's CPU over 3 NVLink bricks too.
  for (int g : t.gpus()) {
    int to_cpu = 0;
    for (int k : t.links_of(g)) {
      const Link& l = t.links()[k];
      if (l.kind == LinkKind::NvLink && t.devices()[l.other(g)].kind == DeviceKind::Cpu) {
        to_cpu += l.lanes;
      }
    }
    EXPECT_EQ(to_cpu, 3);
  }
}

TEST(ShippedMachines, LassenScalesTo512Gpus) {
  const Topology t = load("lassen", {"cluster.nodes=128"});
  EXPECT_EQ(t.nodes(), 128);
  EXPECT_EQ(t.gpus().size(), 512u);
  const Router router(t, t.default_routing());
  router.check_all_pairs();
  const Route far = router.route(t.gpus().front(), t.gpus().back());
  EXPECT_EQ(far.kind, RouteKind::Network);
  EXPECT_EQ(far.devices().front(), t.gpus().front());
  EXPECT_EQ(far.devices().back(), t.gpus().back());
  const RingSet rings = find_rings(t);
  for (const auto& ring : rings.rings) EXPECT_EQ(ring.size(), 512u);
}

}  // namespace
}  // namespace gpuscale::topo
