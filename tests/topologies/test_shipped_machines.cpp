// The shipped machines load, validate and route, and match the facts of ../shared/brief.md:
// the DGX-1V NVLink matrix (§2), the P100 cube (§2), the C4140 configurations and the other
// Dell machines of §4, Sierra nodes (§5) and a 512-GPU Lassen; the NVSwitch machines (DGX-2,
// DGX A100, DGX H100, DGX H200) match the facts their files cite.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sim/compute/gpu_spec.hpp"
#include "topologies/src/rings.hpp"
#include "topologies/src/routing.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::topo {
namespace {

Topology load(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return Topology::build(load_topology_config(name, overrides));
}


int gpu(const Topology& t, const std::string& name) { return *t.find_device(name); }
int device(const Topology& t, const std::string& name) { return *t.find_device(name); }

int nvlink_lanes(const Topology& t, int a, int b) {
  const auto k = t.nvlink_between(a, b);
  return k ? t.links()[*k].lanes : 0;
}

// The CPU a GPU hangs off: the other end of its one x16 PCIe link, which must be a CPU.
int socket_of(const Topology& t, int gpu) {
  int cpu = -1;
  for (int k : t.links_of(gpu)) {
    const Link& l = t.links()[k];
    if (l.kind != LinkKind::Pcie) continue;
    EXPECT_EQ(cpu, -1) << t.devices()[gpu].name << " has more than one PCIe link";
    EXPECT_EQ(l.lanes, 16);
    cpu = l.other(gpu);
  }
  EXPECT_EQ(t.devices()[cpu].kind, DeviceKind::Cpu) << t.devices()[gpu].name;
  return cpu;
}

int count_of(const Topology& t, DeviceKind kind) {
  return static_cast<int>(std::count_if(t.devices().begin(), t.devices().end(),
                                        [kind](const Device& d) { return d.kind == kind; }));
}

// The PCIe switch a GPU or NIC hangs off: the other end of its one PCIe link.
int pcie_parent(const Topology& t, int d) {
  int parent = -1;
  for (int k : t.links_of(d)) {
    if (t.links()[k].kind == LinkKind::Pcie) parent = t.links()[k].other(d);
  }
  return parent;
}

// The device a GPU's NVLinks lead to, and how many lanes: NVSwitch machines have exactly one.
std::pair<int, int> nvlink_uplink(const Topology& t, int gpu) {
  std::pair<int, int> up{-1, 0};
  for (int k : t.links_of(gpu)) {
    const Link& l = t.links()[k];
    if (l.kind != LinkKind::NvLink) continue;
    EXPECT_EQ(up.first, -1) << t.devices()[gpu].name << " has more than one NVLink link";
    up = {l.other(gpu), l.lanes};
  }
  return up;
}

double route_bandwidth(const Topology& t, const std::string& a, const std::string& b) {
  const Route r = Router(t, t.default_routing()).route(gpu(t, a), gpu(t, b));
  EXPECT_EQ(r.kind, RouteKind::NvSwitch) << a << "-" << b;
  return r.legs.at(0).bandwidth(t).value;
}

// brief §2: `nvidia-smi topo -m` on a DGX-1 with V100.
constexpr int kDgx1VoltaNvlinks[8][8] = {
    {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0},
    {2, 1, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
    {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0},
};

TEST(ShippedMachines, EveryMachineLoadsValidatesAndRoutesInEveryMode) {
  const auto names = shipped_topologies().names();
  for (const char* expected :
       {"dgx1-v100", "dgx1-p100", "c4140-b", "c4140-k", "c4140-m", "dss8440", "r740", "t640",
        "r940xa", "precision-5820", "sierra-node", "lassen", "dgx-h200", "dgx-h200-superpod",
        "dgx-2", "dgx-a100", "dgx-h100", "dgx-h100-superpod", "dgx-a100-80gb", "dgx-a100-superpod",
        "precision-5820-pcie", "r940xa-32gb", "dgx1-v100-32gb"}) {
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

// brief §4: the R740, T640 and R940xa of Dell's MLPerf study put each V100-PCIe on its own x16
// port of a CPU, with no switch and no NVLink.
TEST(ShippedMachines, DellCpuAttachedMachinesRouteCrossSocketPairsThroughTheCpus) {
  struct Expected {
    const char* name;
    int gpus, cpus;
    std::vector<int> socket_of_gpu;  // index among the CPUs, in device order
    double memory_GB;
  };
  for (const Expected& m : {Expected{"r740", 3, 2, {0, 1, 1}, 16},
                            Expected{"t640", 4, 2, {0, 0, 1, 1}, 32},
                            Expected{"r940xa", 4, 4, {0, 1, 2, 3}, 16},
                            Expected{"r940xa-32gb", 4, 4, {0, 1, 2, 3}, 32}}) {
    SCOPED_TRACE(m.name);
    const Topology t = load(m.name);
    ASSERT_EQ(t.gpus().size(), static_cast<size_t>(m.gpus));
    EXPECT_EQ(count_of(t, DeviceKind::Cpu), m.cpus);
    EXPECT_EQ(count_of(t, DeviceKind::PcieSwitch), 0);
    for (const Link& l : t.links()) EXPECT_NE(l.kind, LinkKind::NvLink);
    std::vector<int> cpus;
    for (int d = 0; d < static_cast<int>(t.devices().size()); ++d) {
      if (t.devices()[d].kind == DeviceKind::Cpu) cpus.push_back(d);
    }
    const Router staged(t, t.default_routing());
    const Router direct(t, RoutingMode::Direct);
    for (int i = 0; i < m.gpus; ++i) {
      const int a = t.gpus()[i];
      EXPECT_EQ(t.devices()[a].model, "V100-PCIe");
      EXPECT_DOUBLE_EQ(t.devices()[a].memory->value, m.memory_GB * 1e9);
      EXPECT_EQ(socket_of(t, a), cpus[m.socket_of_gpu[i]]);
      for (int j = i + 1; j < m.gpus; ++j) {
        const int b = t.gpus()[j];
        const Route d = direct.route(a, b);
        EXPECT_EQ(d.kind, RouteKind::P2p);
        const Route s = staged.route(a, b);
        if (m.socket_of_gpu[i] == m.socket_of_gpu[j]) {
          // One root complex: peer to peer through the shared CPU.
          EXPECT_EQ(d.devices(), (std::vector<int>{a, socket_of(t, a), b}));
          EXPECT_EQ(s.kind, RouteKind::P2p);
        } else {
          // GPU, its CPU, the other GPU's CPU over UPI, the other GPU; staged in host memory.
          EXPECT_EQ(d.devices(), (std::vector<int>{a, socket_of(t, a), socket_of(t, b), b}));
          EXPECT_EQ(s.kind, RouteKind::HostStaged);
          ASSERT_EQ(s.legs.size(), 2u);
          EXPECT_EQ(s.legs[0].dst(), socket_of(t, a));
        }
      }
    }
    const RingSet rings = find_rings(t);
    EXPECT_FALSE(rings.over_nvlink);
    EXPECT_EQ(rings.rings.size(), 1u);
  }
}

// Skylake-SP Platinum parts have 3 UPI links: four sockets are fully connected, one link a pair.
TEST(ShippedMachines, R940xaJoinsItsFourSocketsByOneUpiLinkPerPair) {
  const Topology t = load("r940xa");
  std::map<std::pair<int, int>, int> upi;
  for (const Link& l : t.links()) {
    if (l.kind == LinkKind::Upi) upi[std::minmax(l.a, l.b)] += l.lanes;
  }
  EXPECT_EQ(upi.size(), 6u);
  for (const auto& [pair, lanes] : upi) EXPECT_EQ(lanes, 1);
}

// Two Quadro GV100 joined by two NVLink bridges of 2 NVLink2 links each: NV4, 100 GB/s per
// direction; both cards on the one Xeon W, whose 36 logical CPUs in Dell's `nvidia-smi topo -m`
// ("CPU Affinity 0-35") make it the 18-core W-2195 at 2.3 GHz.
TEST(ShippedMachines, Precision5820PairsTwoGv100sByFourNvlinks) {
  const Topology t = load("precision-5820");
  ASSERT_EQ(t.gpus().size(), 2u);
  EXPECT_EQ(count_of(t, DeviceKind::Cpu), 1);
  for (const auto& d : t.devices()) {
    if (d.kind != DeviceKind::Cpu) continue;
    EXPECT_EQ(d.cores, 18);
    EXPECT_DOUBLE_EQ(d.clock.value, 2.3e9);
  }
  const int a = t.gpus()[0], b = t.gpus()[1];
  EXPECT_EQ(nvlink_lanes(t, a, b), 4);
  const Link& nvlink = t.links()[*t.nvlink_between(a, b)];
  EXPECT_DOUBLE_EQ(nvlink.bandwidth.value, 100e9);
  EXPECT_NEAR(nvlink.effective_bandwidth().value, 96e9, 1e6);
  for (int g : t.gpus()) {
    EXPECT_EQ(t.devices()[g].model, "Quadro-GV100");
    EXPECT_DOUBLE_EQ(t.devices()[g].memory->value, 32e9);
  }
  EXPECT_EQ(socket_of(t, a), socket_of(t, b));
  EXPECT_EQ(Router(t, t.default_routing()).route(a, b).kind, RouteKind::NvLink);
  const RingSet rings = find_rings(t);
  EXPECT_TRUE(rings.over_nvlink);
  EXPECT_EQ(rings.rings.size(), 4u);  // one ring per lane (docs/topology-schema.md#rings)
}

// The same workstation without its NVLink bridges (Dell's MLPerf slides compare the two): the
// pair peers over PCIe through the one CPU's root complex, whatever the routing mode.
TEST(ShippedMachines, Precision5820PcieIsThe5820WithoutItsNvlinkBridges) {
  const Topology with = load("precision-5820");
  const Topology t = load("precision-5820-pcie");
  ASSERT_EQ(t.gpus().size(), 2u);
  EXPECT_EQ(count_of(t, DeviceKind::Cpu), 1);
  for (const Link& l : t.links()) EXPECT_NE(l.kind, LinkKind::NvLink);
  EXPECT_EQ(t.links().size(), with.links().size() - 1);
  const int a = t.gpus()[0], b = t.gpus()[1];
  for (int g : t.gpus()) {
    EXPECT_EQ(t.devices()[g].model, "Quadro-GV100");
    EXPECT_DOUBLE_EQ(t.devices()[g].memory->value, 32e9);
  }
  EXPECT_EQ(t.default_routing(), RoutingMode::Direct);
  for (RoutingMode mode : {RoutingMode::Direct, RoutingMode::HostStaged}) {
    const Route r = Router(t, mode).route(a, b);
    EXPECT_EQ(r.kind, RouteKind::P2p);
    EXPECT_EQ(r.devices(), (std::vector<int>{a, socket_of(t, a), b}));
  }
  const RingSet rings = find_rings(t);
  EXPECT_FALSE(rings.over_nvlink);
  EXPECT_EQ(rings.rings.size(), 1u);
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

// A Sierra node's GPUs close no NVLink ring, and NCCL 2.3 gives each inter-node ring a NIC of its
// own (net.cu netGetRings): over two nodes the job runs the declaration-order ring, which leaves
// each node from GPU 3 through socket 1's NIC, and its reverse, which leaves from GPU 0 through
// socket 0's. Within one node, or without a router to say where a chain leaves, one ring.
TEST(ShippedMachines, LassenRunsOneRingPerNicAcrossNodes) {
  const Topology t = load("lassen", {"cluster.nodes=2"});
  const Router router(t, t.default_routing());
  const RingSet rings = find_rings(t, 32, 0, 2, &router);
  EXPECT_FALSE(rings.over_nvlink);
  ASSERT_EQ(rings.rings.size(), 2u);
  std::set<int> exit_rails;
  for (const auto& ring : rings.rings) {
    ASSERT_EQ(ring.size(), 8u);
    exit_rails.insert(router.nearest_rail(ring[3]));  // node 0's last GPU before node 1
  }
  EXPECT_EQ(exit_rails, (std::set<int>{0, 1}));
  EXPECT_EQ(rings.rings[1].front(), rings.rings[0][3]);  // the reversed order
  EXPECT_EQ(find_rings(t, 32, 0, 1, &router).rings.size(), 1u);
  EXPECT_EQ(find_rings(t, 32, 0, 2).rings.size(), 1u);
  EXPECT_EQ(find_rings(t, 1, 0, 2, &router).rings.size(), 1u);  // max_rings holds
}

// DGX H200: every GPU joins the NVSwitch fabric with its 18 NVLink 4 links; every pair is one
// cut-through route through the switch at the full 18 x 25 GB/s, which a what-if on the link
// kind scales; the GPUs and NICs of GPUs 0-3 hang off CPU 0, those of 4-7 off CPU 1.
TEST(ShippedMachines, DgxH200JoinsEveryGpuThroughTheNvswitchFabric) {
  const Topology t = load("dgx-h200");
  EXPECT_EQ(count_of(t, DeviceKind::Gpu), 8);
  EXPECT_EQ(count_of(t, DeviceKind::NvSwitch), 1);
  EXPECT_EQ(count_of(t, DeviceKind::Nic), 8);
  const int sw = *t.find_device("nvswitch");
  const Router router(t, t.default_routing());
  for (int a : t.gpus()) {
    EXPECT_EQ(t.links_of(a).size(), 2u);  // the fabric and its PCIe switch
    for (int b : t.gpus()) {
      if (a == b) continue;
      EXPECT_EQ(nvlink_lanes(t, a, b), 0);
      const Route r = router.route(a, b);
      EXPECT_EQ(r.kind, RouteKind::NvSwitch);
      ASSERT_EQ(r.legs.size(), 1u);
      EXPECT_EQ(r.legs[0].devices, (std::vector<int>{a, sw, b}));
      // 18 links of 25 GB/s at the measured 84% (nccl issue #1264, dgx-h200.yaml).
      EXPECT_DOUBLE_EQ(r.legs[0].bandwidth(t).value, 18 * 25e9 * 0.84);
    }
  }
  const Topology half = load("dgx-h200", {"link_kinds.nvlink.lane_bandwidth=12.5GB/s"});
  EXPECT_DOUBLE_EQ(Router(half, half.default_routing())
                       .route(gpu(half, "gpu0"), gpu(half, "gpu5"))
                       .legs[0]
                       .bandwidth(half)
                       .value,
                   18 * 12.5e9 * 0.84);
  // GPU and NIC of one pair share a PCIe switch, on the socket of their network module.
  for (const auto& [g, cpu] : {std::pair{"gpu0", "cpu0"}, std::pair{"gpu3", "cpu0"},
                               std::pair{"gpu4", "cpu1"}, std::pair{"gpu7", "cpu1"}}) {
    int pcie_switch = -1;
    for (int k : t.links_of(gpu(t, g))) {
      if (t.links()[k].kind == LinkKind::Pcie) pcie_switch = t.links()[k].other(gpu(t, g));
    }
    ASSERT_GE(pcie_switch, 0) << g;
    bool on_cpu = false;
    for (int k : t.links_of(pcie_switch)) {
      on_cpu = on_cpu || t.devices()[t.links()[k].other(pcie_switch)].name == cpu;
    }
    EXPECT_TRUE(on_cpu) << g << " on " << cpu;
  }
}

// DGX-2 (topologies/dgx-2.yaml, NVIDIA's Fabric Manager guide): 16 V100 on two baseboards; each
// GPU's 6 NVLink 2 links (one per NVSwitch chip of its board) reach its board's fabric, 6 x 25 GB/s;
// the boards meet only switch to switch, 6 chips x 8 NVLinks = 48. Every pair is an NVSwitch
// route at a GPU's 6 links (x 0.97, the measured copy), cross-board pairs over the trunk, which
// carries a whole board at full rate; thinning the trunk by --set slows only cross-board pairs.
TEST(ShippedMachines, Dgx2JoinsItsTwoBaseboardsByA48LaneNvlinkTrunk) {
  const Topology t = load("dgx-2");
  ASSERT_EQ(t.gpus().size(), 16u);
  EXPECT_EQ(count_of(t, DeviceKind::NvSwitch), 2);
  EXPECT_EQ(count_of(t, DeviceKind::Nic), 8);
  EXPECT_EQ(count_of(t, DeviceKind::Cpu), 2);
  const int board[2] = {device(t, "nvswitch0"), device(t, "nvswitch1")};
  const Link& trunk = t.links()[0];
  EXPECT_EQ(std::minmax(trunk.a, trunk.b), std::minmax(board[0], board[1]));
  EXPECT_EQ(trunk.kind, LinkKind::NvLink);
  EXPECT_EQ(trunk.lanes, 6 * 8);
  const double gpu_link = 6 * 25e9;
  EXPECT_DOUBLE_EQ(trunk.bandwidth.value, 8 * gpu_link) << "non-blocking between the boards";
  for (int i = 0; i < 16; ++i) {
    const int a = t.gpus()[i];
    EXPECT_EQ(t.devices()[a].model, "V100-SXM2");
    EXPECT_DOUBLE_EQ(t.devices()[a].memory->value, 32e9);
    EXPECT_EQ(nvlink_uplink(t, a), std::make_pair(board[i / 8], 6));
  }
  const Router router(t, t.default_routing());
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) {
      if (i == j) continue;
      const int a = t.gpus()[i], b = t.gpus()[j];
      const Route r = router.route(a, b);
      EXPECT_EQ(r.kind, RouteKind::NvSwitch);
      ASSERT_EQ(r.legs.size(), 1u);
      const std::vector<int> expected =
          i / 8 == j / 8 ? std::vector<int>{a, board[i / 8], b}
                         : std::vector<int>{a, board[i / 8], board[j / 8], b};
      EXPECT_EQ(r.legs[0].devices, expected) << i << "-" << j;
      EXPECT_NEAR(r.legs[0].bandwidth(t).value, 0.97 * gpu_link, 1e3) << i << "-" << j;
    }
  }
  const Topology thin = load("dgx-2", {"links.0.lanes=4"});
  EXPECT_NEAR(route_bandwidth(thin, "gpu3", "gpu12"), 0.97 * 4 * 25e9, 1e3);
  EXPECT_NEAR(route_bandwidth(thin, "gpu3", "gpu5"), 0.97 * gpu_link, 1e3);
  const Topology slow = load("dgx-2", {"links.0.lane_bandwidth=2GB/s"});
  EXPECT_NEAR(route_bandwidth(slow, "gpu0", "gpu15"), 0.97 * 48 * 2e9, 1e3);
  // PCIe: GPU pairs share a switch with their NIC; pairs (0,1) and (2,3) share the switch above.
  EXPECT_EQ(pcie_parent(t, gpu(t, "gpu0")), pcie_parent(t, gpu(t, "gpu1")));
  EXPECT_EQ(pcie_parent(t, gpu(t, "gpu0")), pcie_parent(t, device(t, "nic0")));
  EXPECT_EQ(pcie_parent(t, gpu(t, "gpu14")), pcie_parent(t, device(t, "nic7")));
  const Route pcie = Router(t, RoutingMode::Pcie).route(gpu(t, "gpu0"), gpu(t, "gpu2"));
  EXPECT_EQ(pcie.legs.at(0).devices.size(), 5u);  // gpu0, switch, switch above, switch, gpu2
  const Route across = Router(t, RoutingMode::HostStaged).route(gpu(t, "gpu0"), gpu(t, "gpu8"));
  EXPECT_EQ(across.kind, RouteKind::NvSwitch);  // peer access everywhere over NVLink
}

// DGX A100 (topologies/dgx-a100.yaml): 8 A100 40 GB, each with 12 NVLink 3 links (2 to each of
// the 6 NVSwitch chips) to one fabric device, 12 x 25 GB/s = 300 GB/s per direction, the 600 GB/s
// bidirectional NVIDIA quotes; each GPU pair shares a PCIe Gen4 switch with two HDR NICs.
TEST(ShippedMachines, DgxA100JoinsEveryA100ByTwelveNvlinksThroughTheNvswitchFabric) {
  const Topology t = load("dgx-a100");
  ASSERT_EQ(t.gpus().size(), 8u);
  EXPECT_EQ(count_of(t, DeviceKind::NvSwitch), 1);
  EXPECT_EQ(count_of(t, DeviceKind::PcieSwitch), 4);
  EXPECT_EQ(count_of(t, DeviceKind::Nic), 8);
  EXPECT_EQ(count_of(t, DeviceKind::Cpu), 2);
  const int sw = device(t, "nvswitch");
  const Router router(t, t.default_routing());
  for (int a : t.gpus()) {
    EXPECT_EQ(t.devices()[a].model, "A100-SXM4-40GB");
    EXPECT_DOUBLE_EQ(t.devices()[a].memory->value, 40e9);
    EXPECT_EQ(nvlink_uplink(t, a), std::make_pair(sw, 12));
    for (int b : t.gpus()) {
      if (a == b) continue;
      const Route r = router.route(a, b);
      EXPECT_EQ(r.kind, RouteKind::NvSwitch);
      ASSERT_EQ(r.legs.size(), 1u);
      EXPECT_EQ(r.legs[0].devices, (std::vector<int>{a, sw, b}));
      EXPECT_DOUBLE_EQ(r.legs[0].bandwidth(t).value, 12 * 25e9);
      EXPECT_DOUBLE_EQ(2 * r.legs[0].bandwidth(t).value, 600e9);
    }
  }
  // A what-if on one GPU's switch link (link 0 is gpu0's) slows that GPU's pairs only.
  const Topology half = load("dgx-a100", {"links.0.lane_bandwidth=12.5GB/s"});
  EXPECT_DOUBLE_EQ(route_bandwidth(half, "gpu0", "gpu6"), 12 * 12.5e9);
  EXPECT_DOUBLE_EQ(route_bandwidth(half, "gpu1", "gpu6"), 12 * 25e9);
  for (int pair = 0; pair < 4; ++pair) {
    const int sw_of_pair = pcie_parent(t, gpu(t, fmt::format("gpu{}", 2 * pair)));
    EXPECT_EQ(pcie_parent(t, gpu(t, fmt::format("gpu{}", 2 * pair + 1))), sw_of_pair);
    EXPECT_EQ(pcie_parent(t, device(t, fmt::format("nic{}", 2 * pair))), sw_of_pair);
    EXPECT_EQ(pcie_parent(t, device(t, fmt::format("nic{}", 2 * pair + 1))), sw_of_pair);
    int cpu = -1;
    for (int k : t.links_of(sw_of_pair)) {
      const int other = t.links()[k].other(sw_of_pair);
      if (t.devices()[other].kind == DeviceKind::Cpu) cpu = other;
    }
    EXPECT_EQ(cpu, device(t, pair < 2 ? "cpu0" : "cpu1")) << "pair " << pair;
  }
}

// DGX H100 (topologies/dgx-h100.yaml derives from dgx-h200.yaml): the same chassis, NVSwitch
// fabric (18 NVLink 4 links per GPU, 450 GB/s per direction), PCIe, NICs and CPUs, with H100 SXM5
// 80 GB GPUs, whose spec (topologies/gpus/h100-sxm.yaml) holds the H100 datasheet's figures.
// The DGX-2H is the DGX-2 with its 450 W GPUs, whose peaks follow from the one clock that
// Megatron-LM's "39 TFLOPS is 30% of the peak" implies (v100-sxm3-h.yaml).
TEST(ShippedMachines, Dgx2hIsTheDgx2WithFasterGpus) {
  const Topology h = load("dgx-2h");
  const Topology plain = load("dgx-2");
  ASSERT_EQ(h.devices().size(), plain.devices().size());
  ASSERT_EQ(h.links().size(), plain.links().size());
  for (int g : h.gpus()) {
    const Device& gpu = h.devices()[static_cast<std::size_t>(g)];
    EXPECT_EQ(gpu.model, "V100-SXM3-H");
    EXPECT_DOUBLE_EQ(gpu.memory->value, 32e9);
  }
  for (std::size_t k = 0; k < h.links().size(); ++k) {
    EXPECT_DOUBLE_EQ(h.links()[k].effective_bandwidth().value,
                     plain.links()[k].effective_bandwidth().value);
  }
  const compute::GpuSpec spec = compute::load_gpu_spec("V100-SXM3-H");
  const double clock = spec.boost_clock.value;
  EXPECT_NEAR(spec.peak_tensor->value, 640 * 128 * clock, 0.005 * spec.peak_tensor->value);
  EXPECT_NEAR(spec.peak_fp32.value, 80 * 64 * 2 * clock, 0.005 * spec.peak_fp32.value);
  EXPECT_NEAR(39e12 / spec.peak_tensor->value, 0.30, 0.005);  // Megatron-LM's 30%, rounded
}

TEST(ShippedMachines, DgxH100IsTheDgxH200ChassisWithH100Gpus) {
  const Topology h100 = load("dgx-h100");
  const Topology h200 = load("dgx-h200");
  ASSERT_EQ(h100.devices().size(), h200.devices().size());
  for (std::size_t d = 0; d < h100.devices().size(); ++d) {
    const Device& a = h100.devices()[d];
    const Device& b = h200.devices()[d];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.kind, b.kind);
    if (a.kind == DeviceKind::Gpu) {
      EXPECT_EQ(a.model, "H100-SXM");
      EXPECT_DOUBLE_EQ(a.memory->value, 80e9);
      EXPECT_EQ(b.model, "H200-SXM");
    } else {
      EXPECT_EQ(a.model, b.model);
    }
  }
  ASSERT_EQ(h100.links().size(), h200.links().size());
  for (std::size_t k = 0; k < h100.links().size(); ++k) {
    EXPECT_EQ(h100.links()[k].id, h200.links()[k].id);
    EXPECT_EQ(h100.links()[k].lanes, h200.links()[k].lanes);
    EXPECT_DOUBLE_EQ(h100.links()[k].effective_bandwidth().value,
                     h200.links()[k].effective_bandwidth().value);
  }
  const int sw = device(h100, "nvswitch");
  for (int a : h100.gpus()) {
    EXPECT_EQ(nvlink_uplink(h100, a), std::make_pair(sw, 5 + 4 + 4 + 5));
  }
  // 18 links of 25 GB/s at the measured 84% (378 of 450 GB/s per direction, nccl issue #1264).
  EXPECT_DOUBLE_EQ(route_bandwidth(h100, "gpu0", "gpu7"), 18 * 25e9 * 0.84);
  EXPECT_DOUBLE_EQ(2 * route_bandwidth(h100, "gpu2", "gpu5"), 900e9 * 0.84);
  const Topology slow = load("dgx-h100", {"link_kinds.nvlink.lane_bandwidth=20GB/s"});
  EXPECT_DOUBLE_EQ(route_bandwidth(slow, "gpu0", "gpu7"), 18 * 20e9 * 0.84);

  const compute::GpuSpec spec = compute::load_gpu_spec("H100-SXM");
  EXPECT_DOUBLE_EQ(spec.memory.value, 80e9);
  EXPECT_DOUBLE_EQ(spec.memory_bandwidth.value, 3.35e12);
  EXPECT_EQ(spec.sm_count, 132);
  EXPECT_DOUBLE_EQ(spec.peak_tensor->value, 989.4e12);
  EXPECT_NEAR(spec.peak_fp32.value, spec.sm_count * 128 * 2 * spec.boost_clock.value, 0.2e12);

  const Topology pod = load("dgx-h100-superpod", {"cluster.nodes=2"});
  EXPECT_EQ(pod.gpus().size(), 16u);
  for (int g : pod.gpus()) EXPECT_EQ(pod.devices()[g].model, "H100-SXM");
  const Route far = Router(pod, pod.default_routing()).route(pod.gpus().front(), pod.gpus().back());
  EXPECT_EQ(far.kind, RouteKind::Network);
}

}  // namespace
}  // namespace gpuscale::topo
