// What-if machines in a few lines: `base:` derivation changes, removes and adds links and
// devices, `--set` overrides any value, and a cluster file can change its node.
#include <gtest/gtest.h>

#include "tests/support/test_support.hpp"
#include "topologies/src/rings.hpp"
#include "topologies/src/routing.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::topo {
namespace {

using gpuscale::testing::write_temp_file;

TEST(Derivation, AWhatIfDgx1InTenLines) {
  const std::string path = write_temp_file("what-if.yaml", R"(
base: dgx1-v100
name: dgx1-what-if
link_kinds:
  nvlink: {lane_bandwidth: 50 GB/s}
links:
  - {a: gpu3, b: gpu0, lanes: 1}
  - {a: gpu0, b: gpu1, remove: true}
  - {a: gpu4, b: gpu5, remove: true}
  - {a: gpu0, b: gpu5, kind: nvlink, lanes: 1}
)");
  const Topology t = Topology::build(load_topology_config(path));
  const auto dev = [&](const char* n) { return *t.find_device(n); };
  EXPECT_EQ(t.name(), "dgx1-what-if");
  EXPECT_EQ(t.links()[*t.nvlink_between(dev("gpu0"), dev("gpu3"))].lanes, 1);
  EXPECT_DOUBLE_EQ(t.links()[*t.nvlink_between(dev("gpu0"), dev("gpu3"))].bandwidth.value, 50e9);
  EXPECT_FALSE(t.nvlink_between(dev("gpu0"), dev("gpu1")));
  EXPECT_TRUE(t.nvlink_between(dev("gpu0"), dev("gpu5")));
  EXPECT_EQ(Router(t, RoutingMode::TwoHopGpu).route(dev("gpu0"), dev("gpu5")).kind,
            RouteKind::NvLink);
  EXPECT_FALSE(t.nvlink_between(dev("gpu4"), dev("gpu5")));
  // Everything else comes from the base: 33 links, minus two, plus one.
  EXPECT_EQ(t.links().size(), 32u);
}

// `--set gpus.KEY=VALUE` sets KEY on every GPU at once (a DGX-1 of 32 GB V100s), on a cluster's
// node too; a machine without GPUs to set is one error naming the option.
TEST(Derivation, SetGpusReachesEveryGpuAtOnce) {
  const Topology t = Topology::build(load_topology_config("dgx1-v100", {"gpus.memory=32 GB"}));
  ASSERT_EQ(t.gpus().size(), 8u);
  for (int g : t.gpus()) EXPECT_DOUBLE_EQ(t.devices()[static_cast<size_t>(g)].memory->value, 32e9);
  const Topology lassen = Topology::build(load_topology_config("lassen", {"gpus.memory=32 GB"}));
  for (int g : lassen.gpus())
    EXPECT_DOUBLE_EQ(lassen.devices()[static_cast<size_t>(g)].memory->value, 32e9);
  EXPECT_THROW(load_topology_config("dgx1-v100", {"gpus.memry=32 GB"}), ConfigError);
}

TEST(Derivation, RemovingADeviceRemovesItsLinks) {
  const std::string path = write_temp_file("seven-gpus.yaml", R"(
base: dgx1-v100
name: dgx1-seven
devices:
  gpu7: {remove: true}
)");
  const Topology t = Topology::build(load_topology_config(path));
  EXPECT_EQ(t.gpus().size(), 7u);
  EXPECT_FALSE(t.find_device("gpu7"));
  Router(t, RoutingMode::TwoHopGpu).check_all_pairs();
}

TEST(Derivation, BaseChainsAndOverridesApplyLast) {
  const std::string first = write_temp_file("first.yaml", "base: dgx1-v100\nname: first\n");
  const std::string second = write_temp_file(
      "second.yaml", "base: first.yaml\nname: second\nlink_kinds: {pcie: {lane_bandwidth: 1.969 GB/s}}\n");
  (void)first;
  const Topology t = Topology::build(
      load_topology_config(second, {"link_kinds.nvlink.lane_bandwidth=10 GB/s"}));
  EXPECT_EQ(t.name(), "second");
  for (const Link& l : t.links()) {
    if (l.kind == LinkKind::NvLink) {
      EXPECT_DOUBLE_EQ(l.bandwidth.value, l.lanes * 10e9);
    }
    if (l.kind == LinkKind::Pcie) {
      EXPECT_DOUBLE_EQ(l.bandwidth.value, l.lanes * 1.969e9);
    }
  }
}

TEST(Derivation, AClusterOfWhatIfNodes) {
  write_temp_file("fat-node.yaml", R"(
base: sierra-node
name: fat-node
devices:
  gpu0: {memory: 32 GB}
)");
  const std::string cluster = write_temp_file("fat-cluster.yaml", R"(
base: lassen
name: fat-cluster
cluster: {node: fat-node.yaml, nodes: 2}
)");
  const Topology t = Topology::build(load_topology_config(cluster));
  EXPECT_EQ(t.gpus().size(), 8u);
  EXPECT_DOUBLE_EQ(t.devices()[t.gpus()[4]].memory->value, 32e9);  // node 1's gpu0
  EXPECT_EQ(t.devices()[t.gpus()[4]].name, "n1.gpu0");
}

}  // namespace
}  // namespace gpuscale::topo
