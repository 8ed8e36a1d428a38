// NCCL's algorithm choice (nccl_tuning.hpp): its model's closed forms for NCCL 2.7.8 and 2.21.5,
// the choices it makes by size, node count and machine, the NVLS schedule's wire bytes, and
// nccl_auto end to end on the shipped NVSwitch machines (docs/collectives.md).
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/nccl_tuning.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/engine/isolated.hpp"
#include "sim/experiment/collective_run.hpp"
#include "sim/experiment/machine_setup.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale::coll {
namespace {

using gpuscale::testing::config_error_of;

// A DGX-1V as NCCL 2.7.8 sees it: 8 V100s, 6 channels of 22 GB/s over NVLink.
NcclComm dgx1(int nodes = 1) {
  NcclComm c;
  c.ranks = 8 * nodes;
  c.nodes = nodes;
  c.channels = 6;
  c.channel_bw_GBps = nodes == 1 ? 22 : 12;
  c.compute_capability = 70;
  return c;
}

// A DGX H100 as NCCL 2.21.5 sees it: 8 channels of 50 GB/s, NVLS at 450 GB/s.
NcclComm dgx_h100(int nodes = 1) {
  NcclComm c;
  c.version = NcclVersion::v2_21_5;
  c.ranks = 8 * nodes;
  c.nodes = nodes;
  c.channels = 8;
  c.channel_bw_GBps = 50;
  c.compute_capability = 90;
  c.nvls_bus_bw_GBps = 450;
  return c;
}

TEST(NcclTuning, RingSimpleOnOneNodeIsNcclsClosedForm) {
  // 2.7.8: latency 8.4 + 2(p-1) 3.4 us; bandwidth C B p / 2(p-1); S / (1000 bw) us.
  const NcclComm c = dgx1();
  const double bytes = 256e6;
  const double latency_us = 8.4 + 14 * 3.4;
  const double bw_GBps = 6 * 22 * 8.0 / 14;
  EXPECT_NEAR(nccl_model_allreduce_s(c, NcclAlgorithm::Ring, NcclProtocol::Simple, bytes),
              (latency_us + bytes / (1000 * bw_GBps)) * 1e-6, 1e-12);
}

TEST(NcclTuning, TreeAcrossNodesIsNcclsClosedFormWithItsCorrection) {
  // 2.7.8, 16 nodes of 8: bus bandwidth min(0.9 C B, 80) halved; latency
  // 2 ((8 - 1) 28 + log2(16) 50) us for Simple; 1 MiB is log2(2^20 / 64) = 14: factor .5.
  const NcclComm c = dgx1(16);
  const double bytes = 1 << 20;
  const double bw_GBps = std::min(0.9 * 6 * 12, 80.0) * 0.5 * 0.5;
  const double latency_us = 2 * (7 * 28.0 + 4 * 50.0);
  EXPECT_NEAR(nccl_model_allreduce_s(c, NcclAlgorithm::Tree, NcclProtocol::Simple, bytes),
              (latency_us + bytes / (1000 * bw_GBps)) * 1e-6, 1e-12);
}

TEST(NcclTuning, NvlsIsItsLatencyAndFiveSixthsOfItsBusBandwidth) {
  const double bytes = 1e9;
  EXPECT_NEAR(nccl_model_allreduce_s(dgx_h100(), NcclAlgorithm::Nvls, NcclProtocol::Simple, bytes),
              (25 + bytes / (1000 * 450 * 5.0 / 6.0)) * 1e-6, 1e-12);
}

TEST(NcclTuning, VoltaOnOneNodeRunsRingsLlForSmallAndSimpleForLarge) {
  const NcclComm c = dgx1();
  EXPECT_EQ(choose_nccl_allreduce(c, 1024).protocol, NcclProtocol::LL);
  EXPECT_EQ(choose_nccl_allreduce(c, 1024).algorithm, NcclAlgorithm::Ring);
  const NcclChoice large = choose_nccl_allreduce(c, 1e9);
  EXPECT_EQ(large.algorithm, NcclAlgorithm::Ring);
  EXPECT_EQ(large.protocol, NcclProtocol::Simple);
}

TEST(NcclTuning, AtScaleTreesWinSmallAndMediumSizesAndRingsTheLargest) {
  // A ring's latency grows with 2(p - 1) steps, a tree's with log2 of the nodes.
  for (NcclComm c : {dgx1(64), dgx_h100(64)}) {
    EXPECT_EQ(choose_nccl_allreduce(c, 64 << 10).algorithm, NcclAlgorithm::Tree);
    EXPECT_EQ(choose_nccl_allreduce(c, 4 << 20).algorithm, NcclAlgorithm::Tree);
  }
  // On two nodes a ring's latency is small and its bandwidth the tree's double.
  EXPECT_EQ(choose_nccl_allreduce(dgx1(2), 1e9).algorithm, NcclAlgorithm::Ring);
}

TEST(NcclTuning, HopperNodesRunNvlsForLargeBuffersOnOneNodeOnly) {
  EXPECT_EQ(choose_nccl_allreduce(dgx_h100(), 1e9).algorithm, NcclAlgorithm::Nvls);
  EXPECT_EQ(choose_nccl_allreduce(dgx_h100(), 1024).algorithm, NcclAlgorithm::Ring);
  // Without CollNet, NCCL runs no NVLS across nodes; 2.7.8 has none at all.
  EXPECT_LT(nccl_model_allreduce_s(dgx_h100(2), NcclAlgorithm::Nvls, NcclProtocol::Simple, 1e9), 0);
  NcclComm old = dgx_h100();
  old.version = NcclVersion::v2_7_8;
  EXPECT_LT(nccl_model_allreduce_s(old, NcclAlgorithm::Nvls, NcclProtocol::Simple, 1e9), 0);
  NcclComm no_switch = dgx_h100();
  no_switch.nvls_bus_bw_GBps = 0;
  EXPECT_NE(choose_nccl_allreduce(no_switch, 1e9).algorithm, NcclAlgorithm::Nvls);
}

TEST(NcclTuning, Ll128RunsOnlyWhereNcclEnablesIt) {
  NcclComm pascal = dgx1();
  pascal.compute_capability = 60;
  EXPECT_LT(nccl_model_allreduce_s(pascal, NcclAlgorithm::Ring, NcclProtocol::LL128, 1e6), 0);
  NcclComm pci = dgx1();
  pci.intra = IntraLink::Pci;
  EXPECT_LT(nccl_model_allreduce_s(pci, NcclAlgorithm::Ring, NcclProtocol::LL128, 1e6), 0);
  EXPECT_GT(nccl_model_allreduce_s(dgx1(), NcclAlgorithm::Ring, NcclProtocol::LL128, 1e6), 0);
  // 2.7.8 has no Hopper entry: LL128 off there; 2.21.5 turns it on.
  NcclComm hopper_on_2_7 = dgx_h100();
  hopper_on_2_7.version = NcclVersion::v2_7_8;
  EXPECT_LT(nccl_model_allreduce_s(hopper_on_2_7, NcclAlgorithm::Ring, NcclProtocol::LL128, 1e6),
            0);
  EXPECT_GT(nccl_model_allreduce_s(dgx_h100(), NcclAlgorithm::Ring, NcclProtocol::LL128, 1e6), 0);
}

TEST(NcclTuning, AFixedProtocolIsKept) {
  for (double bytes : {1e3, 1e6, 1e9}) {
    EXPECT_EQ(choose_nccl_allreduce(dgx1(16), bytes, {NcclProtocol::Simple}).protocol,
              NcclProtocol::Simple);
  }
}

TEST(NcclTuning, VersionsHaveNames) {
  EXPECT_EQ(to_string(NcclVersion::v2_7_8), std::string("2.7.8"));
  EXPECT_EQ(to_string(NcclVersion::v2_21_5), std::string("2.21.5"));
}

// ---- the schedules --------------------------------------------------------------------------

CollectiveRequest nvls_request(int p, double bytes) {
  CollectiveRequest r;
  r.bytes = bytes;
  r.ranks = p;
  r.protocol = nccl_protocol(NcclProtocol::Simple, IntraLink::NvLink, NcclVersion::v2_21_5);
  NcclComm c = dgx_h100();
  c.ranks = p;
  r.nccl = c;
  return r;
}

TEST(NcclNvls, EveryGpuLinkCarriesTheBufferAndOneSliceEachWay) {
  const int p = 8;
  const double bytes = 64e6;
  const Schedule s = build_schedule("nccl_nvls", nvls_request(p, bytes));
  std::vector<double> out(p, 0), in(p, 0);
  int delays = 0;
  for (const Op& op : s.ops) {
    if (op.kind == Op::Kind::Delay) {
      ++delays;
      EXPECT_DOUBLE_EQ(op.seconds, 25e-6);
    }
    if (op.kind == Op::Kind::Reduce) ADD_FAILURE() << "the switch reduces, not a GPU";
    if (op.kind != Op::Kind::Transfer) continue;
    out[static_cast<size_t>(op.src)] += op.bytes;
    in[static_cast<size_t>(op.dst)] += op.bytes;
  }
  EXPECT_EQ(delays, 1);
  for (int r = 0; r < p; ++r) {
    EXPECT_DOUBLE_EQ(out[static_cast<size_t>(r)], bytes * (1 + 1.0 / p));
    EXPECT_DOUBLE_EQ(in[static_cast<size_t>(r)], bytes * (1 + 1.0 / p));
  }
  EXPECT_TRUE(s.lock_step);
}

TEST(NcclNvls, RefusedWithoutAReducingSwitchOrAcrossNodes) {
  CollectiveRequest r = nvls_request(8, 1e6);
  r.nccl->nvls_bus_bw_GBps = 0;
  const std::string message = config_error_of([&] { build_schedule("nccl_nvls", r); });
  EXPECT_NE(message.find("nccl_nvls needs GPUs of one node that share an NVSwitch"),
            std::string::npos)
      << message;
  CollectiveRequest two_nodes = nvls_request(16, 1e6);
  two_nodes.nccl->nodes = 2;
  EXPECT_FALSE(config_error_of([&] { build_schedule("nccl_nvls", two_nodes); }).empty());
}

TEST(NcclAuto, RunsTheChosenAlgorithmsScheduleWithTheChosenProtocol) {
  CollectiveRequest r = nvls_request(8, 1e9);
  r.nccl_chooses_protocol = true;
  Schedule chosen = build_schedule("nccl_nvls", r);
  chosen.algorithm = "nccl_auto";
  EXPECT_EQ(build_schedule("nccl_auto", r), chosen);

  CollectiveRequest small = nvls_request(8, 1024);
  small.nccl_chooses_protocol = true;
  const NcclChoice choice = nccl_auto_choice(small);
  EXPECT_EQ(choice.algorithm, NcclAlgorithm::Ring);
  EXPECT_EQ(choice.protocol, NcclProtocol::LL);
  CollectiveRequest as_ring = small;
  as_ring.protocol = nccl_protocol(NcclProtocol::LL, IntraLink::NvLink, NcclVersion::v2_21_5);
  Schedule ring = build_schedule("nccl_ring", as_ring);
  ring.algorithm = "nccl_auto";
  EXPECT_EQ(build_schedule("nccl_auto", small), ring);
}

TEST(NcclAuto, NeedsTheMachinesFacts) {
  CollectiveRequest r = nvls_request(8, 1e6);
  r.nccl.reset();
  EXPECT_NE(config_error_of([&] { build_schedule("nccl_auto", r); }).find("nccl_auto needs"),
            std::string::npos);
}

// ---- on the shipped machines ------------------------------------------------------------------

struct ShippedRun {
  std::string protocol;
  double seconds = 0;
};

ShippedRun run_on(const std::string& machine, int gpus, const std::string& algorithm,
                  double bytes) {
  const std::string out = sim::run_isolated([&] {
    const topo::Topology t = sim::machine_for(machine, {}, gpus);
    const sim::Placement placement = sim::place_job(t, gpus);
    const topo::Router router(t, t.default_routing());
    const sim::CollectiveRun run =
        sim::simulate_collective(t, router, placement.gpus, placement.rings,
                                 placement.node_of_rank, algorithm, bytes, "auto", 0);
    return fmt::format("{:.17g}\n{}", run.seconds, run.protocol);
  });
  const size_t newline = out.find('\n');
  return {out.substr(newline + 1), std::stod(out.substr(0, newline))};
}

TEST(NcclAuto, OnADgxH100LargeBuffersRunNvlsAtTheSwitchLinksClosedForm) {
  // 8 GPUs, each 450 GB/s to the NVSwitch at the measured 84% (378 GB/s): S (1 + 1/8) each
  // way, after NVLS's 25 us.
  const double bytes = 1e9;
  const ShippedRun run = run_on("dgx-h100", 8, "nccl_auto", bytes);
  EXPECT_EQ(run.protocol, "nvls/simple (NCCL 2.21.5)");
  const double expected = 25e-6 + bytes * (1 + 1.0 / 8) / 378e9;
  EXPECT_NEAR(run.seconds / expected, 1.0, 0.01) << run.seconds;
  EXPECT_LT(run.seconds, run_on("dgx-h100", 8, "nccl_ring", bytes).seconds);
}

TEST(NcclAuto, VoltaMachinesFollowNccl278) {
  EXPECT_EQ(run_on("dgx1-v100", 8, "nccl_auto", 1e9).protocol, "ring/simple (NCCL 2.7.8)");
  EXPECT_EQ(run_on("dgx1-v100", 8, "nccl_auto", 1024).protocol, "ring/ll (NCCL 2.7.8)");
}

TEST(NcclAuto, ADgxH100ClusterRunsTreesForMediumBuffers) {
  const ShippedRun run = run_on("dgx-h100-superpod", 256, "nccl_auto", 4e6);
  EXPECT_EQ(run.protocol.substr(0, 5), "tree/") << run.protocol;
}

TEST(NvswitchRings, AClusterOfDgxH100RunsOneRingPerRail) {
  // Each rotation of the node's order leaves through another GPU's NIC: 8 rails, 8 channels, and
  // a two-node allreduce gets all 8 NICs (50 GB/s each), not one.
  const topo::Topology t = sim::machine_for("dgx-h100-superpod", {}, 16);
  EXPECT_EQ(sim::place_job(t, 16).rings.size(), 8u);
  const double bytes = 1e9;
  const ShippedRun run = run_on("dgx-h100-superpod", 16, "nccl_ring", bytes);
  // A ring allreduce's network edges carry 2(p-1)/p S over 8 NICs of 50 GB/s.
  EXPECT_LT(run.seconds, 2.0 * 15 / 16 * bytes / (4 * 50e9));
}

}  // namespace
}  // namespace gpuscale::coll
