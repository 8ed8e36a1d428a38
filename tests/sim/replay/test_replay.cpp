// The replay engine against closed forms and invariants: a ring allreduce on a uniform ring
// costs 2(p-1)/p S/B + 2(p-1) alpha; a two-hop copy costs its two single-hop copies; P2P on one
// GPU exposes no communication; more bandwidth never slows an iteration. Every simulation runs in
// a child process (run_isolated): SimGrid allows one engine per process.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/engine/isolated.hpp"
#include "sim/experiment/collective_run.hpp"
#include "sim/experiment/experiment.hpp"
#include "tests/support/test_support.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::sim {
namespace {

constexpr double kBandwidth = 25e9;  // B/s, one NVLink lane, efficiency 1
constexpr double kAlpha = 1e-6;      // s

// p GPUs on a ring of single NVLinks: every hop the same bandwidth and a latency of
// `latency_us`, except that the link closing the ring (gpu{p-1} to gpu0, of another kind) has
// `slow_latency_us`.
struct RingLatencies {
  double latency_us = 1, slow_latency_us = 1;
};
std::string uniform_ring(int p, RingLatencies l) {
  std::string yaml = fmt::format(
      "name: uniform-ring\nlink_kinds:\n  nvlink: {{lane_bandwidth: 25 GB/s, latency: {} us}}\n"
      "  infiniband: {{lane_bandwidth: 25 GB/s, latency: {} us}}\ndevices:\n",
      l.latency_us, l.slow_latency_us);
  for (int i = 0; i < p; ++i) yaml += "  gpu" + std::to_string(i) + ": {kind: gpu, model: V100-SXM2, memory: 16 GB}\n";
  yaml += "links:\n";
  for (int i = 0; i < p; ++i) {
    yaml += "  - {a: gpu" + std::to_string(i) + ", b: gpu" + std::to_string((i + 1) % p) +
            ", kind: " + (i + 1 == p ? "infiniband" : "nvlink") + ", lanes: 1}\n";
  }
  return testing::write_temp_file(
      fmt::format("uniform-ring-{}-{}-{}.yaml", p, l.latency_us, l.slow_latency_us), yaml);
}

double ring_allreduce_s(int p, double bytes, const std::string& algorithm, RingLatencies l = {},
                        const std::string& protocol = "ideal") {
  const std::string path = uniform_ring(p, l);
  return std::stod(run_isolated([&] {
    const topo::Topology t = topo::Topology::build(topo::load_topology_config(path));
    const topo::Router router(t, topo::RoutingMode::Direct);
    std::vector<int> ranks(static_cast<size_t>(p));
    for (int i = 0; i < p; ++i) ranks[static_cast<size_t>(i)] = i;
    // Every digit: std::to_string keeps six decimals, a microsecond.
    return fmt::format(
        "{:.17g}",
        simulate_collective(t, router, t.gpus(), {ranks}, {}, algorithm, bytes, protocol, 0).seconds);
  }));
}

TEST(Replay, RingAllreduceMatchesTheClosedFormOnAUniformRing) {
  for (int p : {3, 4, 8}) {
    for (double bytes : {1e6, 100e6}) {
      const double expected = 2.0 * (p - 1) / p * bytes / kBandwidth + 2.0 * (p - 1) * kAlpha;
      EXPECT_NEAR(ring_allreduce_s(p, bytes, "nccl_ring") / expected, 1.0, 0.01) << p << " " << bytes;
      EXPECT_NEAR(ring_allreduce_s(p, bytes, "ring") / expected, 1.0, 0.01) << p << " " << bytes;
    }
  }
}

// NCCL pipelines chunks round the ring, so a chunk pays each edge's latency in turn: making one
// edge of p slower by d adds 2(p-1)/p d to an allreduce, not 2(p-1) d (Op::pipeline).
TEST(Replay, RingAllreducePaysTheMeanLatencyOfItsEdges) {
  const int p = 4;
  for (double bytes : {1e3, 100e6}) {
    const double added = ring_allreduce_s(p, bytes, "nccl_ring", {1, 10}) -
                         ring_allreduce_s(p, bytes, "nccl_ring", {1, 2});
    EXPECT_NEAR(added / (2.0 * (p - 1) / p * 8e-6), 1.0, 1e-3) << bytes << " B: " << added << " s";
  }
}

// NCCL's hop latency (tuning.cc) measures a whole hop, wire included, so a step of its ring costs
// the larger of that and the route's latency, not their sum. On 4 GPUs an 8-byte allreduce
// with LL (base 3.6 us, 0.47 us per NVLink hop) takes 3.6 us + 6 x max(0.47 us, alpha) (plus the
// flow's own route latency once where alpha is the smaller) against 6 alpha with no protocol.
TEST(Replay, NcclRingStepPaysTheLargerOfItsHopLatencyAndItsRoutes) {
  const int p = 4, steps = 2 * (p - 1);
  const double base = 3.6e-6, hop = 0.47e-6;
  for (double alpha_us : {1.0, 0.1}) {
    const double alpha = alpha_us * 1e-6;
    const double ll = ring_allreduce_s(p, 8, "nccl_ring", {alpha_us, alpha_us}, "ll");
    const double ideal = ring_allreduce_s(p, 8, "nccl_ring", {alpha_us, alpha_us});
    EXPECT_NEAR(ideal, steps * alpha, 1e-9) << alpha_us;
    const double expected = base + steps * std::max(hop, alpha) + (alpha < hop ? alpha : 0.0);
    EXPECT_NEAR(ll, expected, 1e-9) << alpha_us << " us: " << ll << " s";
  }
}

TEST(Replay, TwoHopCopyCostsTwoSingleHopCopies) {
  const double bytes = 64e6;
  const std::string result = run_isolated([&] {
    const topo::Topology t = topo::Topology::build(topo::load_topology_config("dgx1-v100"));
    const topo::Router router(t, topo::RoutingMode::TwoHopGpu);
    const int gpu0 = t.gpus()[0], gpu5 = t.gpus()[5];
    const topo::Route route = router.route(gpu0, gpu5);
    if (route.legs.size() != 2) return std::string("not two legs");
    const int mid = route.legs[0].dst();
    // Each single copy in its own engine would need its own process; the legs' own law
    // (latency + bytes / bandwidth, checked in test_simgrid_platform) gives them here.
    double single = 0;
    for (const topo::Leg& leg : route.legs) single += leg.latency(t).value + bytes / leg.bandwidth(t).value;
    const double two_hop = simulate_copy(t, router, gpu0, gpu5, bytes);
    return std::to_string(two_hop / single) + " " + std::to_string(mid);
  });
  EXPECT_NEAR(std::stod(result), 1.0, 1e-3) << result;
}

ResultRow run_one(const Experiment& e) {
  const auto rows = run_experiment(e);
  EXPECT_FALSE(rows.empty());
  return rows.back();
}

TEST(Replay, P2pOnOneGpuUsesNoLink) {
  // MXNet's kvstore still runs on one GPU (the update and a local copy of the weights), but
  // nothing crosses a link.
  Experiment e;
  e.workloads = {"lenet"};
  e.gpus = {1};
  e.comms = {"p2p"};
  const ResultRow row = run_one(e);
  EXPECT_GT(row.iteration_s, 0);
  EXPECT_DOUBLE_EQ(row.speedup, 1.0);
  EXPECT_TRUE(row.link_utilisation.empty());
}

TEST(Replay, MoreBandwidthNeverSlowsAnIteration) {
  for (const char* comm : {"p2p", "nccl", "nccl_reduce_bcast"}) {
    Experiment slow;
    slow.workloads = {"lenet"};
    slow.gpus = {8};
    slow.batches = {16};
    slow.comms = {comm};
    // Horovod's fusion cycle quantises an iteration to whole 5 ms cycles, so a faster link can
    // land the last allreduce just past a cycle boundary: monotonicity holds without fusion.
    slow.fusion_mb = 0;
    // MXNet's NCCL kvstore runs each key's reduce and broadcast as engine ops that take the
    // allocator mutex in the order they become ready: a greedy list schedule, which shorter
    // tasks can lengthen (Graham, SIAM J. Appl. Math. 17(2), 1969). LeNet at 8 GPUs shows it:
    // 50 GB/s NVLink lanes give 9.97 ms, 25 GB/s 9.29 ms, 30 GB/s 8.75 ms. Without the engine's
    // ordering the transfers alone must obey the law.
    if (std::string(comm) == "nccl_reduce_bcast") slow.without = {"engine"};
    Experiment fast = slow;
    fast.topology_overrides = {"link_kinds.nvlink.lane_bandwidth=50 GB/s",
                               "link_kinds.pcie.lane_bandwidth=2 GB/s"};
    const double t_slow = run_one(slow).iteration_s;
    const double t_fast = run_one(fast).iteration_s;
    EXPECT_LE(t_fast, t_slow * (1 + 1e-9)) << comm;
  }
}

TEST(Replay, MultiGpuP2pMovesGradientsOverNvlink) {
  Experiment e;
  e.workloads = {"lenet"};
  e.gpus = {8};
  e.batches = {16};
  e.comms = {"p2p"};
  const ResultRow row = run_one(e);
  ASSERT_TRUE(row.link_utilisation.contains("nvlink"));
  EXPECT_GT(row.link_utilisation.at("nvlink").max, 0);
  EXPECT_GT(row.memory_gpu0_gb, row.memory_max_other_gb);  // GPU0 reduces LeNet's fc1
}

// MXNet's kvstore=device enables peer access only where the GPUs allow it, and its copies between
// the DGX-1's GPUs without NVLink go through host memory (workloads/frameworks/mxnet.yaml,
// copies_without_peer_access): over PCIe, where the machine's own two-hop routing keeps every
// copy on NVLink. NCCL's rings never leave NVLink, and --routing still decides when given.
TEST(Replay, MxnetPeerCopiesWithoutPeerAccessGoThroughTheHost) {
  Experiment e;
  e.workloads = {"googlenet"};
  e.gpus = {8};
  e.batches = {16};
  e.iterations = 2;
  e.comms = {"p2p"};
  const auto pcie_use = [](const ResultRow& row) {
    return row.link_utilisation.contains("pcie") ? row.link_utilisation.at("pcie").max : 0.0;
  };
  EXPECT_GT(pcie_use(run_one(e)), 0);
  Experiment two_hop = e;
  two_hop.routing = "two_hop_gpu";
  EXPECT_EQ(pcie_use(run_one(two_hop)), 0);
  Experiment nccl = e;
  nccl.comms = {"nccl_reduce_bcast"};
  EXPECT_EQ(pcie_use(run_one(nccl)), 0);
}

}  // namespace
}  // namespace gpuscale::sim
