// A lock-step depth run in closed time steps (sim/engine/fluid_depth.hpp) against the closed
// forms of flows that share one link but start apart.
#include <gtest/gtest.h>

#include "sim/engine/fluid_depth.hpp"
#include "tests/support/test_support.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::sim {
namespace {

// gpu0 and gpu1 send into gpu2 through a switch; gpu1's cable is 1 us longer, and gpu2's four
// lanes (4 GB/s) are the narrowest link either crosses.
topo::Topology two_senders_one_receiver() {
  const std::string path = gpuscale::testing::write_temp_file("two-senders.yaml", R"(
name: two-senders
description: two GPUs sending into a third through a switch, one over a longer cable
link_kinds:
  pcie: {lane_bandwidth: 1 GB/s, latency: 0.1 us}
devices:
  sw: {kind: pcie_switch, ports: {pcie: 48}}
  gpu0: {kind: gpu, model: V100-SXM2, memory: 16 GB, ports: {pcie: 16}}
  gpu1: {kind: gpu, model: V100-SXM2, memory: 16 GB, ports: {pcie: 16}}
  gpu2: {kind: gpu, model: V100-SXM2, memory: 16 GB, ports: {pcie: 16}}
links:
  - {a: gpu0, b: sw, kind: pcie, lanes: 16}
  - {a: gpu1, b: sw, kind: pcie, lanes: 16, latency: 1.1 us}
  - {a: sw, b: gpu2, kind: pcie, lanes: 4}
)");
  return topo::Topology::build(topo::load_topology_config(path));
}

struct TwoSenders {
  topo::Topology machine = two_senders_one_receiver();
  topo::Router router{machine, machine.default_routing()};
  topo::Route near = router.route(*machine.find_device("gpu0"), *machine.find_device("gpu2"));
  topo::Route far = router.route(*machine.find_device("gpu1"), *machine.find_device("gpu2"));
};

// The near flow has gpu2's link to itself until the far one starts; the link never idles, so the
// last byte lands 2S/C after the first flow's start, not after the second's.
TEST(FluidDepth, FlowsThatStartApartShareTheLinkFromTheFirstStart) {
  const TwoSenders m;
  const double bytes = 1e6, link_Bps = 4e9;
  const double near_s = m.near.legs[0].latency(m.machine).value;
  const double far_s = m.far.legs[0].latency(m.machine).value;
  ASSERT_NEAR(far_s - near_s, 1e-6, 1e-15);
  const double seconds = fluid_depth_seconds(
      {{.route = &m.near, .bytes = bytes}, {.route = &m.far, .bytes = bytes}}, m.machine);
  EXPECT_NEAR(seconds, near_s + 2 * bytes / link_Bps, 1e-15);
  // Charging both the shared rate from the later start is 1 us (the stagger) late.
  EXPECT_GT(far_s + 2 * bytes / link_Bps - seconds, 0.99e-6);
}

// Alone, a flow is its latency, its bytes at the narrowest link's rate, and the latency steps
// its schedule charges after it.
TEST(FluidDepth, AFlowAloneIsLatencyBytesOverBandwidthAndItsTail) {
  const TwoSenders m;
  const double bytes = 3e6, tail_s = 5e-6;
  const double seconds =
      fluid_depth_seconds({{.route = &m.far, .bytes = bytes, .tail_s = tail_s}}, m.machine);
  EXPECT_NEAR(seconds, m.far.legs[0].latency(m.machine).value + bytes / 4e9 + tail_s, 1e-15);
}

// Bytes are conserved: however the two flows share the link, gpu2's link carries both, so the
// depth lasts at least (S1 + S2) / C past the first start, and exactly that when neither flow
// is done before the other starts.
TEST(FluidDepth, UnequalFlowsEndWhenTheLinkHasCarriedBoth) {
  const TwoSenders m;
  const double near_s = m.near.legs[0].latency(m.machine).value;
  const double seconds = fluid_depth_seconds(
      {{.route = &m.near, .bytes = 1e6}, {.route = &m.far, .bytes = 3e6}}, m.machine);
  EXPECT_NEAR(seconds, near_s + 4e6 / 4e9, 1e-15);
}

}  // namespace
}  // namespace gpuscale::sim
