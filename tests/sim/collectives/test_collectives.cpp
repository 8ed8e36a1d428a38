// Collective schedules: each algorithm's closed form under the uniform alpha-beta-gamma evaluator,
// what each moves over the wire, how many ops it takes at 512 ranks, that every schedule keeps the
// contract of schedule.hpp, and the registry's names and messages (docs/collectives.md).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/nccl_tests.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/collectives/schedule_estimate.hpp"
#include "tests/support/test_support.hpp"
#include "topologies/src/rings.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::coll {
namespace {

using gpuscale::testing::config_error_of;

constexpr double kS = 100e6;  // bytes
const UniformCost kCost{1.5e-6, 20e9, 700e9};
const double a = kCost.alpha_s, B = kCost.bandwidth_Bps, G = kCost.reduce_bandwidth_Bps;

// What NCCL's tuning reads (nccl_auto, nccl_nvls): an NVSwitch node of H100s, one channel.
NcclComm nvswitch_comm(int p) {
  NcclComm c;
  c.version = NcclVersion::v2_21_5;
  c.ranks = std::max(p, 2);
  c.channel_bw_GBps = B / 1e9;
  c.compute_capability = 90;
  c.nvls_bus_bw_GBps = B / 1e9;
  return c;
}

CollectiveRequest request(int p, Collective kind = Collective::AllReduce) {
  CollectiveRequest r;
  r.kind = kind;
  r.bytes = kS;
  r.ranks = p;
  r.protocol = ideal_protocol();
  r.nccl = nvswitch_comm(p);
  return r;
}

// m ranks on each of n nodes, node k holding ranks k*m .. k*m + m-1.
CollectiveRequest on_nodes(int m, int n) {
  CollectiveRequest r = request(m * n);
  for (int rank = 0; rank < m * n; ++rank) r.node_of_rank.push_back(rank / m);
  return r;
}

double time_of(const std::string& algorithm, const CollectiveRequest& r) {
  const Schedule s = build_schedule(algorithm, r);
  validate(s);
  return critical_path_s(s, kCost);
}

bool is_pof2(int p) { return (p & (p - 1)) == 0; }
int log2_floor(int p) { return static_cast<int>(std::floor(std::log2(p) + 1e-9)); }
int log2_ceil(int p) { return static_cast<int>(std::ceil(std::log2(p) - 1e-9)); }

void expect_time(double expected, double actual) {
  EXPECT_NEAR(actual, expected, 1e-12 * expected + 1e-15);
}

double wire_bytes(const Schedule& s) {
  double total = 0;
  for (const Op& op : s.ops) {
    if (op.kind == Op::Kind::Transfer) total += op.bytes;
  }
  return total;
}

std::vector<double> received_by_rank(const Schedule& s) {
  std::vector<double> in(static_cast<std::size_t>(s.ranks), 0.0);
  for (const Op& op : s.ops) {
    if (op.kind == Op::Kind::Transfer) in[op.dst] += op.bytes;
  }
  return in;
}

std::vector<std::vector<int>> shifted_rings(int p, int channels) {
  std::vector<std::vector<int>> rings;
  for (int c = 0; c < channels; ++c) {
    std::vector<int> ring;
    for (int i = 0; i < p; ++i) ring.push_back((i * (c % 2 == 0 ? 1 : p - 1) + c) % p);
    rings.push_back(ring);
  }
  return rings;
}

const std::vector<int> kSizes = {2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 64};

// ---- closed forms -----------------------------------------------------------------------------

TEST(NcclRing, AllreduceIsTheRingFormula) {
  for (int p : kSizes) {
    expect_time(2 * (p - 1) * a + 2.0 * (p - 1) / p * kS / B, time_of("nccl_ring", request(p)));
  }
}

TEST(NcclRing, ChannelsSplitTheBytes) {
  for (int p : {2, 5, 8}) {
    CollectiveRequest r = request(p);
    r.rings = shifted_rings(p, 3);
    expect_time(2 * (p - 1) * a + 2.0 * (p - 1) / p * kS / (3 * B), time_of("nccl_ring", r));
  }
}

TEST(NcclRing, ProtocolAddsNcclsLatencyAndWireBytes) {
  const int p = 8;
  CollectiveRequest r = request(p);
  r.protocol = nccl_protocol(NcclProtocol::LL);
  const double latency = 3.6e-6 + 2 * (p - 1) * 0.47e-6;  // brief section 7, NCCL 2.7.8
  expect_time(latency + 2 * (p - 1) * a + 2.0 * (p - 1) / p * kS * 2.0 / B,
              time_of("nccl_ring", r));
  r.protocol = nccl_protocol(NcclProtocol::Simple);
  expect_time(8.4e-6 + 2 * (p - 1) * 3.4e-6 + 2 * (p - 1) * a + 2.0 * (p - 1) / p * kS / B,
              time_of("nccl_ring", r));
}

TEST(NcclRing, InterNodeStepsPayTheNetworkHop) {
  CollectiveRequest r = on_nodes(4, 3);  // 12 ranks, 3 nodes: 2(n-1) = 4 network steps of 22
  r.protocol = nccl_protocol(NcclProtocol::Simple);
  const Protocol& pr = r.protocol;
  const double latency = pr.ring_base_s + 18 * pr.ring_hop_intra_s + 4 * pr.ring_hop_inter_s;
  expect_time(latency + 22 * a + 22.0 / 12 * kS / B, time_of("nccl_ring", r));
}

TEST(NcclRing, ReduceAndBroadcastAreChainsThroughTheRoot) {
  for (int p : kSizes) {
    for (Collective kind : {Collective::Reduce, Collective::Broadcast}) {
      CollectiveRequest r = request(p, kind);
      r.root = p / 2;
      r.rings = shifted_rings(p, 2);
      expect_time((p - 1) * a + kS / (2 * B), time_of("nccl_ring", r));
      const Schedule s = build_schedule("nccl_ring", r);
      const auto in = received_by_rank(s);
      if (kind == Collective::Reduce) {
        std::set<int> senders;
        for (const Op& op : s.ops) senders.insert(op.src);
        EXPECT_FALSE(senders.count(r.root)) << "the root only receives";
      } else {
        EXPECT_EQ(in[r.root], 0) << "the root only sends";
      }
    }
  }
}

// NCCL's allgather and reducescatter are one pass round the ring: p-1 steps, each edge carrying
// (p-1)/p of the size S (the gathered output, the scattered input) split over the channels.
TEST(NcclRing, AllgatherAndReducescatterAreOnePassRoundTheRing) {
  for (int p : kSizes) {
    for (Collective kind : {Collective::AllGather, Collective::ReduceScatter}) {
      CollectiveRequest r = request(p, kind);
      expect_time((p - 1) * a + double(p - 1) / p * kS / B, time_of("nccl_ring", r));
      r.rings = shifted_rings(p, 3);
      expect_time((p - 1) * a + double(p - 1) / p * kS / (3 * B), time_of("nccl_ring", r));
    }
  }
}

TEST(NcclRing, AllgatherLatencyIsNcclsForPMinusOneSteps) {
  CollectiveRequest r = on_nodes(4, 3);  // 12 ranks, 3 nodes: n-1 = 2 network steps of 11
  r.kind = Collective::AllGather;
  r.protocol = nccl_protocol(NcclProtocol::LL128);
  const Protocol& pr = r.protocol;
  const double latency = pr.ring_base_s + 9 * pr.ring_hop_intra_s + 2 * pr.ring_hop_inter_s;
  expect_time(latency + 11 * a + 11.0 / 12 * kS * 128 / 120 / B, time_of("nccl_ring", r));
}

// The two halves of the allreduce: together its time exactly without protocol latency, and one
// base latency more with it (each half pays NCCL's base once).
TEST(NcclRing, AllgatherPlusReducescatterIsTheAllreduce) {
  for (int p : {2, 3, 8, 17}) {
    for (bool with_protocol : {false, true}) {
      CollectiveRequest r = on_nodes(p, 2);
      r.rings = shifted_rings(2 * p, 2);
      if (with_protocol) r.protocol = nccl_protocol(NcclProtocol::Simple);
      const double allreduce = time_of("nccl_ring", r);
      r.kind = Collective::AllGather;
      const double gather = time_of("nccl_ring", r);
      r.kind = Collective::ReduceScatter;
      const double scatter = time_of("nccl_ring", r);
      expect_time(allreduce + (with_protocol ? r.protocol.ring_base_s : 0), gather + scatter);
    }
  }
}

// NCCL's all-to-all is grouped sends: without contention every block S/p goes at once.
TEST(NcclRing, AlltoallIsOneDirectSendPerPair) {
  for (int p : kSizes) {
    expect_time(a + kS / p / B, time_of("nccl_ring", request(p, Collective::AllToAll)));
  }
  CollectiveRequest r = on_nodes(4, 2);
  r.kind = Collective::AllToAll;
  r.protocol = nccl_protocol(NcclProtocol::LL);
  const Protocol& pr = r.protocol;
  expect_time(pr.ring_base_s + pr.ring_hop_inter_s + a + kS / 8 * 2.0 / B,
              time_of("nccl_ring", r));
}

TEST(NcclReduceBcast, IsTwoChainsOneAfterTheOther) {
  for (int p : kSizes) {
    expect_time(2 * (p - 1) * a + 2 * kS / B, time_of("nccl_reduce_bcast", request(p)));
  }
  CollectiveRequest r = request(8);
  r.protocol = nccl_protocol(NcclProtocol::Simple);
  expect_time(2 * (8.4e-6 + 7 * 3.4e-6) + 14 * a + 2 * kS / B, time_of("nccl_reduce_bcast", r));
}

TEST(NcclTree, DepthIsLog2NodesPlusTheChain) {
  for (int n : {1, 2, 4, 8, 16, 64}) {
    for (int m : {1, 2, 4, 8}) {
      if (n * m < 2) continue;
      const int depth = log2_floor(n) + m - 1;
      expect_time(2 * depth * a + kS / (2 * B), time_of("nccl_tree", on_nodes(m, n)));
    }
  }
}

TEST(NcclTree, ProtocolLatencyIsNcclsTreeModel) {
  CollectiveRequest r = on_nodes(4, 8);
  r.protocol = nccl_protocol(NcclProtocol::LL128);
  const Protocol& pr = r.protocol;
  const double latency = pr.tree_base_s + 2 * (3 * pr.tree_hop_intra_s + 3 * pr.tree_hop_inter_s);
  expect_time(latency + 2 * 6 * a + kS * 128 / 120 / (2 * B), time_of("nccl_tree", r));
}

// The two trees of an even node count are mirrors: no node has children in both (NCCL's reason
// for the double tree: each node's links carry one tree's interior traffic at most).
TEST(NcclTree, EvenNodeCountsAreInteriorInOneTreeAtMost) {
  for (int n = 2; n <= 64; n += 2) {
    const Schedule s = build_schedule("nccl_tree", on_nodes(1, n));
    ASSERT_EQ(s.ops.size(), 4u * (n - 1));
    std::vector<std::set<int>> trees_with_children(n);
    for (int tree = 0; tree < 2; ++tree) {
      for (int e = 0; e < n - 1; ++e) {  // per edge: child -> parent, then parent -> child
        const Op& up = s.ops[tree * 2 * (n - 1) + 2 * e];
        trees_with_children[up.dst].insert(tree);
      }
    }
    for (int k = 0; k < n; ++k) EXPECT_LE(trees_with_children[k].size(), 1u) << n << " " << k;
  }
}

TEST(MpiRing, IsReduceScatterPlusAllgather) {
  for (int p : kSizes) {
    expect_time(2 * (p - 1) * a + 2.0 * (p - 1) / p * kS / B + 3.0 * (p - 1) / p * kS / G,
                time_of("ring", request(p)));
  }
}

TEST(RecursiveDoubling, PowersOfTwoAndMpichFolding) {
  for (int p : kSizes) {
    const int k = log2_floor(p);
    const double round = a + kS / B + 3 * kS / G;
    const double expected = is_pof2(p) ? k * round : (k + 1) * round + a + kS / B;
    expect_time(expected, time_of("recursive_doubling", request(p)));
  }
}

TEST(Rabenseifner, PowersOfTwoAndMpichFolding) {
  for (int p : kSizes) {
    const int q = 1 << log2_floor(p);
    const double core =
        2 * log2_floor(p) * a + 2.0 * (q - 1) / q * kS / B + 3.0 * (q - 1) / q * kS / G;
    const double expected = is_pof2(p) ? core : (a + kS / B + 3 * kS / G) + core + (a + kS / B);
    expect_time(expected, time_of("rabenseifner", request(p)));
  }
}

TEST(BinomialTree, LogRoundsUpAndDown) {
  for (int p : kSizes) {
    const int k = log2_ceil(p);
    for (int root : {0, p - 1}) {
      CollectiveRequest r = request(p);
      r.root = root;
      expect_time(k * (2 * a + 2 * kS / B + 3 * kS / G), time_of("binomial_tree", r));
      r.kind = Collective::Reduce;
      expect_time(k * (a + kS / B + 3 * kS / G), time_of("binomial_tree", r));
      r.kind = Collective::Broadcast;
      expect_time(k * (a + kS / B), time_of("binomial_tree", r));
    }
  }
}

TEST(Hierarchical, NodeReduceLeaderRingNodeBroadcast) {
  for (int n : {1, 2, 3, 5, 8}) {
    for (int m : {1, 2, 3, 4, 8}) {
      if (n * m < 2) continue;
      const int k = log2_ceil(m);
      const double ring =
          2 * (n - 1) * a + 2.0 * (n - 1) / n * kS / B + 3.0 * (n - 1) / n * kS / G;
      expect_time(k * (a + kS / B + 3 * kS / G) + ring + k * (a + kS / B),
                  time_of("hierarchical", on_nodes(m, n)));
    }
  }
}

TEST(P2p, GatherReduceCopyBack) {
  for (int p : kSizes) {
    CollectiveRequest r = request(p);
    r.root = p - 1;
    expect_time(2 * (a + kS / B) + (p + 1) * kS / G, time_of("p2p", r));
    r.kind = Collective::Reduce;
    expect_time(a + kS / B + (p + 1) * kS / G, time_of("p2p", r));
    r.kind = Collective::Broadcast;
    expect_time(a + kS / B, time_of("p2p", r));
  }
}

// LBANN's Sierra rule (aluminum.cpp): float buffers of at most 4096, 8192, 32768, 65536 and
// 262144 elements go through Aluminum's host-transfer allreduce from 64, 128, 256, 512 and 2048
// ranks on; nothing below 64 ranks.
TEST(Aluminum, HostTransferThresholdsAreLbannsSierraRule) {
  const std::map<int, double> max_bytes = {
      {2, 0},           {63, 0},          {64, 16384},      {127, 16384},      {128, 32768},
      {255, 32768},     {256, 131072},    {511, 131072},    {512, 262144},     {1024, 262144},
      {2047, 262144},   {2048, 1048576},  {65536, 1048576}};
  for (const auto& [p, bytes] : max_bytes) {
    EXPECT_EQ(aluminum_host_transfer_max_bytes(p), bytes) << p;
  }
}

// Under the host-transfer threshold Aluminum runs recursive doubling up to 512 floats (2 KiB),
// Rabenseifner above; over it, and below 64 ranks at any size, NCCL's ring.
TEST(Aluminum, ChoiceSwitchesAtTheStatedBytes) {
  EXPECT_EQ(aluminum_choice(4, 63), "nccl_ring");
  EXPECT_EQ(aluminum_choice(4, 64), "recursive_doubling");
  EXPECT_EQ(aluminum_choice(2048, 64), "recursive_doubling");
  EXPECT_EQ(aluminum_choice(2052, 64), "rabenseifner");
  EXPECT_EQ(aluminum_choice(16384, 64), "rabenseifner");
  EXPECT_EQ(aluminum_choice(16388, 64), "nccl_ring");
  EXPECT_EQ(aluminum_choice(262144, 1024), "rabenseifner");
  EXPECT_EQ(aluminum_choice(262148, 1024), "nccl_ring");
  EXPECT_EQ(aluminum_choice(1048576, 2048), "rabenseifner");
}

// Each side of each switch is the closed form of the algorithm chosen there, powers of two and
// not (100 ranks fold 36 into pairs), with NCCL's latency on the ring's side only.
TEST(Aluminum, EachSideOfTheSwitchIsTheChosenAlgorithmsClosedForm) {
  auto recursive_doubling = [](int p, double S) {
    const int k = log2_floor(p);
    const double round = a + S / B + 3 * S / G;
    return is_pof2(p) ? k * round : (k + 1) * round + a + S / B;
  };
  auto rabenseifner = [](int p, double S) {
    const int q = 1 << log2_floor(p);
    const double core =
        2 * log2_floor(p) * a + 2.0 * (q - 1) / q * S / B + 3.0 * (q - 1) / q * S / G;
    return is_pof2(p) ? core : (a + S / B + 3 * S / G) + core + (a + S / B);
  };
  for (int m : {1, 4}) {
    for (int p : {16, 63, 64, 100, 128, 256, 512, 2048}) {
      if (p % m != 0) continue;
      CollectiveRequest r = on_nodes(m, p / m);
      r.protocol = nccl_protocol(NcclProtocol::Simple);
      const Protocol& pr = r.protocol;
      const int n = p / m;
      const double ring_latency = pr.ring_base_s + (2 * (p - 1) - 2 * (n - 1)) *
                                  pr.ring_hop_intra_s + 2 * (n - 1) * pr.ring_hop_inter_s;
      auto ring = [&](double S) {
        return ring_latency + 2 * (p - 1) * a + 2.0 * (p - 1) / p * S * pr.wire_ratio / B;
      };
      const double threshold = aluminum_host_transfer_max_bytes(p);
      for (double S : {4.0, 2048.0, 2052.0, threshold, threshold + 4, 100e6}) {
        if (S <= 0) continue;
        r.bytes = S;
        const double expected = S > threshold ? ring(S)
                                : S <= 2048  ? recursive_doubling(p, S)
                                             : rabenseifner(p, S);
        expect_time(expected, time_of("aluminum", r));
      }
    }
  }
}

TEST(Aluminum, RunsTheChosenSchedule) {
  for (double S : {1024.0, 65536.0, 1e6}) {
    CollectiveRequest r = on_nodes(4, 64);
    r.bytes = S;
    const Schedule chosen = build_schedule(aluminum_choice(S, 256), r);
    const Schedule s = build_schedule("aluminum", r);
    EXPECT_EQ(s.algorithm, "aluminum");
    EXPECT_EQ(s.ops, chosen.ops) << S;
  }
  EXPECT_EQ(algorithms_run_by("aluminum"),
            (std::vector<std::string>{"nccl_ring", "recursive_doubling", "rabenseifner"}));
  EXPECT_EQ(algorithms_run_by("ring"), std::vector<std::string>{"ring"});
}

// ---- what moves ---------------------------------------------------------------------------------

// Every allreduce but recursive doubling and NVLS moves 2(p-1) S over the wire (recursive
// doubling moves p log2 p S, NVLS (p + 1) S); the bandwidth-optimal ones give each rank
// 2(p-1)/p S.
TEST(Bytes, AllreduceWireTotals) {
  for (int p : {2, 3, 8, 12, 16}) {
    for (const auto& name : algorithm_names()) {
      CollectiveRequest r = request(p);
      r.rings = shifted_rings(p, 2);
      if (name == "nccl_tree" || name == "hierarchical") r = on_nodes(1, p);
      const Schedule s = build_schedule(name, r);
      if (name == "nccl_nvls") {  // the switch reduces: each GPU sends S (1 + 1/p)
        EXPECT_NEAR(wire_bytes(s), (p + 1) * kS, 1e-6 * kS) << p;
        continue;
      }
      if (name == "nccl_auto") {  // what it chose moves what that moves
        EXPECT_EQ(wire_bytes(s),
                  wire_bytes(build_schedule(schedule_of(nccl_auto_choice(r).algorithm), r)));
        continue;
      }
      if (name == "recursive_doubling") {
        if (is_pof2(p)) {
          EXPECT_DOUBLE_EQ(wire_bytes(s), p * log2_floor(p) * kS);
        }
        continue;
      }
      EXPECT_NEAR(wire_bytes(s), 2 * (p - 1) * kS, 1e-6 * kS) << name << " p=" << p;
      if (name == "nccl_ring" || name == "ring" || (name == "rabenseifner" && is_pof2(p))) {
        for (double in : received_by_rank(s)) {
          EXPECT_NEAR(in, 2.0 * (p - 1) / p * kS, 1e-6 * kS) << name << " p=" << p;
        }
      }
    }
  }
}

// Allgather and reducescatter move (p-1) S in all, (p-1)/p S into each rank; all-to-all moves
// S/p once between every ordered pair, (p-1)/p S into each rank.
TEST(Bytes, NcclRingAllgatherReducescatterAlltoallTotals) {
  for (int p : {2, 3, 8, 12}) {
    for (Collective kind :
         {Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll}) {
      CollectiveRequest r = request(p, kind);
      if (kind != Collective::AllToAll) r.rings = shifted_rings(p, 2);
      const Schedule s = build_schedule("nccl_ring", r);
      EXPECT_NEAR(wire_bytes(s), (p - 1) * kS, 1e-6 * kS) << to_string(kind) << " p=" << p;
      for (double in : received_by_rank(s)) {
        EXPECT_NEAR(in, double(p - 1) / p * kS, 1e-6 * kS) << to_string(kind) << " p=" << p;
      }
    }
  }
  std::map<std::pair<int, int>, double> sent;
  for (const Op& op : build_schedule("nccl_ring", request(5, Collective::AllToAll)).ops) {
    sent[{op.src, op.dst}] += op.bytes;
  }
  EXPECT_EQ(sent.size(), 20u);
  for (const auto& [pair, bytes] : sent) EXPECT_DOUBLE_EQ(bytes, kS / 5);
}

TEST(Bytes, WireRatioScalesNcclBytes) {
  CollectiveRequest r = request(8);
  r.protocol = nccl_protocol(NcclProtocol::LL128);
  EXPECT_NEAR(wire_bytes(build_schedule("nccl_ring", r)), 14 * kS * 128 / 120, 1);
  r.protocol = nccl_protocol(NcclProtocol::LL);
  EXPECT_NEAR(wire_bytes(build_schedule("nccl_tree", r)), 14 * kS * 2, 1);
}

TEST(Bytes, ReductionsTouchWhatTheyMust) {
  auto reduce_bytes = [](const Schedule& s) {
    double total = 0;
    for (const Op& op : s.ops) {
      if (op.kind == Op::Kind::Reduce) total += op.bytes;
    }
    return total;
  };
  const int p = 8;
  // The ring sums (p-1)/p S per rank: read two, write one.
  EXPECT_NEAR(reduce_bytes(build_schedule("ring", request(p))), 3 * (p - 1) * kS, 1);
  // p2p: one kernel reading p copies and writing one.
  const Schedule s = build_schedule("p2p", request(p));
  EXPECT_NEAR(reduce_bytes(s), (p + 1) * kS, 1);
  // NCCL fuses the reduction into its copies.
  for (const char* name : {"nccl_ring", "nccl_tree", "nccl_reduce_bcast"}) {
    EXPECT_EQ(reduce_bytes(build_schedule(name, request(p))), 0) << name;
  }
}

TEST(Bytes, P2pCopiesEachGradientToTheReducerAndBack) {
  CollectiveRequest r = request(8);
  r.root = 3;
  const Schedule s = build_schedule("p2p", r);
  std::map<std::pair<int, int>, int> copies;
  for (const Op& op : s.ops) {
    if (op.kind == Op::Kind::Transfer) ++copies[{op.src, op.dst}];
  }
  for (int rank = 0; rank < 8; ++rank) {
    if (rank == 3) continue;
    EXPECT_EQ((copies[{rank, 3}]), 1);
    EXPECT_EQ((copies[{3, rank}]), 1);
  }
  EXPECT_EQ(copies.size(), 14u);
}

// Follows data through the dependencies of the step-wise algorithms. Before an op, a rank knows
// its own contribution and what its deps that touch it left it knowing; a Transfer a -> b leaves a
// as it was and b knowing both; a Reduce leaves its rank as it was. At the end every rank must
// know every rank's contribution (an allreduce). Segments are not tracked, so this catches a
// missing dependency or round, not a wrong split.
std::vector<std::set<int>> contributions_held(const Schedule& s) {
  struct Knowledge {
    std::set<int> at_src, at_dst;
  };
  std::vector<Knowledge> after(s.ops.size());
  std::vector<std::set<int>> held(static_cast<std::size_t>(s.ranks));
  auto before = [&](int rank, const Op& op) {
    std::set<int> known = {rank};
    for (int dep : op.deps) {
      const Op& d = s.ops[dep];
      const std::set<int>* k = d.src == rank ? &after[dep].at_src
                               : d.dst == rank ? &after[dep].at_dst
                                               : nullptr;
      if (k != nullptr) known.insert(k->begin(), k->end());
    }
    return known;
  };
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const Op& op = s.ops[i];
    EXPECT_NE(op.kind, Op::Kind::Delay) << "the step-wise algorithms have no joins";
    after[i].at_src = before(op.src, op);
    if (op.kind == Op::Kind::Transfer) {
      after[i].at_dst = before(op.dst, op);
      after[i].at_dst.insert(after[i].at_src.begin(), after[i].at_src.end());
      held[op.dst].insert(after[i].at_dst.begin(), after[i].at_dst.end());
    }
    held[op.src].insert(after[i].at_src.begin(), after[i].at_src.end());
  }
  return held;
}

// Each of Aluminum's branches moves what its algorithm moves, and its step-wise ones leave every
// rank holding every contribution.
TEST(Bytes, AluminumConservesEachBranchsBytes) {
  for (int p : {64, 100, 256}) {
    CollectiveRequest r = request(p);
    const double threshold = aluminum_host_transfer_max_bytes(p);
    for (double S : {1024.0, threshold, 4 * threshold}) {
      r.bytes = S;
      const Schedule s = build_schedule("aluminum", r);
      if (S <= 2048 && is_pof2(p)) {
        EXPECT_DOUBLE_EQ(wire_bytes(s), p * log2_floor(p) * S) << p;
      } else if (S > 2048) {
        EXPECT_NEAR(wire_bytes(s), 2 * (p - 1) * S, 1e-9 * S) << p << " " << S;
      }
      if (S > threshold) continue;
      const auto held = contributions_held(s);
      for (int rank = 0; rank < p; ++rank) {
        EXPECT_EQ(held[rank].size(), static_cast<std::size_t>(p)) << p << " " << S;
      }
    }
  }
}

TEST(Bytes, StepwiseAlgorithmsGatherEveryContribution) {
  for (const char* name : {"recursive_doubling", "rabenseifner", "binomial_tree", "p2p"}) {
    for (int p = 2; p <= 17; ++p) {
      CollectiveRequest r = request(p);
      r.root = p / 3;
      const auto held = contributions_held(build_schedule(name, r));
      for (int rank = 0; rank < p; ++rank) {
        EXPECT_EQ(held[rank].size(), static_cast<std::size_t>(p)) << name << " p=" << p;
      }
    }
  }
}

// ---- size, order, contract ----------------------------------------------------------------------

TEST(Scale, OpCountsAt512RanksOn128Nodes) {
  const std::map<std::string, std::size_t> expected = {
      {"nccl_ring", 512},          {"nccl_reduce_bcast", 2 * 511 + 1},
      {"nccl_tree", 4 * 511},      {"ring", 3 * 512},
      {"recursive_doubling", 2 * 512 * 9}, {"rabenseifner", 3 * 512 * 9},
      {"binomial_tree", 3 * 511},  {"hierarchical", 3 * (512 - 128) + 3 * 128 + 1},
      {"p2p", 2 * 511 + 1},        {"aluminum", 512},
      {"nccl_nvls", 512},          {"nccl_auto", 512}};  // NVLS (the request's switch), no delay
  for (const auto& name : algorithm_names()) {
    const Schedule s = build_schedule(name, on_nodes(4, 128));
    std::size_t deps = 0;
    for (const Op& op : s.ops) deps += op.deps.size();
    EXPECT_EQ(s.ops.size(), expected.at(name)) << name;
    EXPECT_LE(deps, 4 * s.ops.size()) << name << ": deps must stay O(ops)";
  }
  CollectiveRequest r = on_nodes(4, 128);
  r.kind = Collective::AllToAll;  // what NCCL itself sends: one message per ordered pair
  EXPECT_EQ(build_schedule("nccl_ring", r).ops.size(), 512u * 511);
}

TEST(Scale, NinePowersOfTwoRoundsAreStillSmall) {
  for (const auto& name : algorithm_names()) {
    const Schedule s = build_schedule(name, on_nodes(8, 64));
    EXPECT_LE(s.ops.size(), 3u * 512 * 9 + 8) << name << ": O(p log p) at most";
  }
}

TEST(Contract, ValidForEveryAlgorithmCollectiveAndSize) {
  std::vector<int> sizes;
  for (int p = 1; p <= 17; ++p) sizes.push_back(p);
  sizes.insert(sizes.end(), {64, 100, 512});
  for (const auto& algorithm : algorithms()) {
    for (Collective kind : algorithm.collectives) {
      for (int p : sizes) {
        for (int variant = 0; variant < 3; ++variant) {
          CollectiveRequest r = request(p, kind);
          r.root = (p * 2) / 3;
          r.protocol = nccl_protocol(NcclProtocol::LL128);
          if (variant >= 1) r.rings = shifted_rings(p, 2 + variant);
          if (variant == 2) {  // uneven nodes, ids out of order
            for (int rank = 0; rank < p; ++rank) r.node_of_rank.push_back((rank * 7 / 5) % 3 * 10);
          }
          const Schedule s = build_schedule(algorithm.name, r);
          EXPECT_NO_THROW(validate(s)) << algorithm.name << " " << to_string(kind) << " p=" << p;
          EXPECT_EQ(s.algorithm, algorithm.name);
          EXPECT_EQ(s.ranks, p);
          EXPECT_EQ(s.payload_bytes, kS);
          if (p == 1) {
            EXPECT_TRUE(s.ops.empty()) << algorithm.name;
          }
        }
      }
    }
  }
}

TEST(Contract, ZeroBytesIsNoOps) {
  for (const auto& name : algorithm_names()) {
    CollectiveRequest r = request(8);
    r.bytes = 0;
    EXPECT_TRUE(build_schedule(name, r).ops.empty()) << name;
  }
}

TEST(Contract, SameRequestSameSchedule) {
  for (const auto& name : algorithm_names()) {
    CollectiveRequest r = on_nodes(3, 7);
    r.rings = shifted_rings(21, 3);
    r.protocol = nccl_protocol(NcclProtocol::Simple);
    EXPECT_EQ(build_schedule(name, r), build_schedule(name, r)) << name;
  }
}

TEST(Contract, ValidateNamesTheBrokenOp) {
  Schedule s{"test", 2, 1, {}};
  s.ops.push_back({Op::Kind::Transfer, 0, 1, 1, 0, 1, {}});
  EXPECT_NO_THROW(validate(s));
  auto message = [](const Schedule& bad) {
    try {
      validate(bad);
    } catch (const std::logic_error& e) {
      return std::string(e.what());
    }
    return std::string("<valid>");
  };
  Schedule forward = s;
  forward.ops.push_back({Op::Kind::Reduce, 1, -1, 3, 0, 0, {1}});
  EXPECT_EQ(message(forward),
            "schedule 'test' (2 ranks): op 1 (reduce): dep 1 is not an earlier op");
  Schedule self = s;
  self.ops[0].dst = 0;
  EXPECT_NE(message(self).find("to itself"), std::string::npos);
  Schedule outside = s;
  outside.ops[0].dst = 2;
  EXPECT_NE(message(outside).find("outside 0..1"), std::string::npos);
  Schedule negative = s;
  negative.ops[0].bytes = -1;
  EXPECT_NE(message(negative).find("bytes -1"), std::string::npos);
}

// ---- registry, requests, protocols --------------------------------------------------------------

TEST(Registry, NamesAndMessages) {
  EXPECT_EQ(algorithm_names(),
            (std::vector<std::string>{"nccl_ring", "nccl_reduce_bcast", "nccl_tree", "nccl_nvls",
                                      "nccl_auto", "ring",
                                      "recursive_doubling", "rabenseifner", "binomial_tree",
                                      "hierarchical", "p2p", "aluminum"}));
  EXPECT_EQ(find_algorithm("rabenseifner").name, "rabenseifner");
  EXPECT_EQ(config_error_of([] { find_algorithm("rnig"); }),
            "unknown algorithm 'rnig' (did you mean 'ring'?)");
  EXPECT_EQ(config_error_of([] { build_schedule("nccl_tree", request(4, Collective::Broadcast)); }),
            "algorithm 'nccl_tree' does not implement broadcast (it implements: allreduce; "
            "broadcast is implemented by: nccl_ring, binomial_tree, p2p)");
  EXPECT_EQ(algorithms_implementing(Collective::AllToAll), std::vector<std::string>{"nccl_ring"});
  EXPECT_EQ(collective_names(), (std::vector<std::string>{"allreduce", "reduce", "broadcast",
                                                          "allgather", "reducescatter",
                                                          "alltoall"}));
  for (Collective kind : all_collectives()) {
    EXPECT_EQ(collective_by_name(to_string(kind)), kind);
  }
  EXPECT_EQ(config_error_of([] { collective_by_name("allgater"); }),
            "unknown collective 'allgater' (did you mean 'allgather'?)");
}

TEST(Registry, MalformedRequestsSayWhatIsWrong) {
  CollectiveRequest r = request(4);
  r.root = 4;
  EXPECT_EQ(config_error_of([&] { build_schedule("p2p", r); }),
            "collective request: root 4 is not a rank (ranks 0..3)");
  r = request(4);
  r.rings = {{0, 1, 2, 2}};
  EXPECT_EQ(config_error_of([&] { build_schedule("nccl_ring", r); }),
            "collective request: ring 0 is not an order of the 4 ranks 0..3 (got [0, 1, 2, 2])");
  r = request(0);
  EXPECT_EQ(config_error_of([&] { build_schedule("ring", r); }),
            "collective request: ranks must be at least 1 (got 0)");
  r = request(4);
  r.node_of_rank = {0, 0, 1};
  EXPECT_EQ(config_error_of([&] { build_schedule("hierarchical", r); }),
            "collective request: node_of_rank has 3 entries for 4 ranks");
}

TEST(Protocols, NamesFiguresAndChoiceBySize) {
  const Protocol ll = protocol_by_name("ll");
  EXPECT_DOUBLE_EQ(ll.wire_ratio, 2.0);
  EXPECT_DOUBLE_EQ(ll.ring_base_s, 3.6e-6);
  EXPECT_DOUBLE_EQ(ll.ring_hop_intra_s, 0.47e-6);
  EXPECT_DOUBLE_EQ(protocol_by_name("ll128").ring_hop_intra_s, 1.9e-6);
  EXPECT_DOUBLE_EQ(protocol_by_name("simple").ring_base_s, 8.4e-6);
  EXPECT_DOUBLE_EQ(protocol_by_name("ll", IntraLink::Pci).ring_hop_intra_s, 1.0e-6);
  EXPECT_EQ(config_error_of([] { protocol_by_name("simpel"); }),
            "unknown NCCL protocol 'simpel' (did you mean 'simple'?)");
  // 8 ranks, 6 channels of 20 GB/s: LL for small messages, Simple for large ones.
  EXPECT_EQ(choose_nccl_protocol(4e3, 8, 1, 6, 20e9).name, "ll");
  EXPECT_EQ(choose_nccl_protocol(4e6, 8, 1, 6, 20e9).name, "ll128");
  EXPECT_EQ(choose_nccl_protocol(400e6, 8, 1, 6, 20e9).name, "simple");
  EXPECT_EQ(choose_nccl_protocol(4e6, 8, 1, 6, 20e9, {NcclProtocol::LL, NcclProtocol::Simple}).name,
            "simple");
}

// NCCL weighs each collective's own pipeline steps (tuning.cc): the allreduce's choice is the ring
// choice with 2(p-1) steps, an allgather has half of them, and all-to-all's p2p sends switch from
// LL to Simple above 16 KiB.
TEST(Protocols, ChoiceWeighsEachCollectivesSteps) {
  EXPECT_EQ(nccl_ring_steps(Collective::AllReduce, 16, 2).steps, 30);
  EXPECT_EQ(nccl_ring_steps(Collective::AllReduce, 16, 2).inter_steps, 2);
  EXPECT_EQ(nccl_ring_steps(Collective::AllGather, 16, 2).steps, 15);
  EXPECT_EQ(nccl_ring_steps(Collective::ReduceScatter, 16, 2).inter_steps, 1);
  EXPECT_EQ(nccl_ring_steps(Collective::Broadcast, 16, 2).steps, 15);
  EXPECT_EQ(nccl_ring_steps(Collective::AllToAll, 16, 2).steps, 1);
  EXPECT_EQ(nccl_ring_steps(Collective::AllToAll, 16, 1).inter_steps, 0);
  EXPECT_DOUBLE_EQ(nccl_ring_steps(Collective::AllReduce, 16, 2).edge_share, 30.0 / 16);
  EXPECT_DOUBLE_EQ(nccl_ring_steps(Collective::AllGather, 16, 2).edge_share, 15.0 / 16);
  EXPECT_DOUBLE_EQ(nccl_ring_steps(Collective::Broadcast, 16, 2).edge_share, 1.0);
  for (double bytes = 1e3; bytes < 1e10; bytes *= 1.7) {
    EXPECT_EQ(choose_nccl_protocol(bytes, 8, 2, 6, 20e9).name,
              choose_nccl_ring_protocol(bytes, {14, 2, 14.0 / 8}, 6, 20e9).name)
        << bytes;
  }
  // Simple overtakes LL128 where its cheaper wire (1 against 128/120) pays for its dearer hops:
  // base + s hop + s/p S w/(C B) equal for both at S = (1.5 s - 1.6) us * 15 C B p / s, so an
  // allgather (s = 7 on 8 ranks) turns to Simple at a smaller S than an allreduce (s = 14).
  auto switch_point = [](Collective kind) {
    double bytes = 1e3;
    const RingSteps steps = nccl_ring_steps(kind, 8, 1);
    while (choose_nccl_ring_protocol(bytes, steps, 6, 20e9).name != "simple") bytes *= 1.001;
    return bytes;
  };
  for (Collective kind : {Collective::AllGather, Collective::AllReduce}) {
    const int steps = kind == Collective::AllGather ? 7 : 14;
    const double expected = (1.5 * steps - 1.6) * 1e-6 * 15 * 6 * 20e9 * 8 / steps;
    EXPECT_NEAR(switch_point(kind) / expected, 1.0, 0.002) << to_string(kind);
  }
  EXPECT_EQ(choose_nccl_p2p_protocol(16384).name, "ll");
  EXPECT_EQ(choose_nccl_p2p_protocol(16385).name, "simple");
}

// ---- nccl-tests' conventions -------------------------------------------------------------------

TEST(NcclTests, SizeAndCountRoundAsTheTestsDo) {
  auto shape = [](Collective kind, std::uint64_t bytes, int ranks) {
    const NcclTestsShape s = nccl_tests_shape(kind, bytes, ranks);
    return std::pair<std::uint64_t, std::uint64_t>{s.size_B, s.count};
  };
  using P = std::pair<std::uint64_t, std::uint64_t>;
  // allreduce, broadcast, reduce: whole floats.
  EXPECT_EQ(shape(Collective::AllReduce, 8, 8), (P{8, 2}));
  EXPECT_EQ(shape(Collective::AllReduce, 10, 8), (P{8, 2}));
  EXPECT_EQ(shape(Collective::Broadcast, 7, 8), (P{4, 1}));
  EXPECT_EQ(shape(Collective::Reduce, 1 << 30, 8), (P{1 << 30, 1 << 28}));
  // allgather, reducescatter, alltoall: per-rank counts in multiples of 4 floats (16 bytes).
  for (Collective kind :
       {Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll}) {
    EXPECT_EQ(shape(kind, 64, 8), (P{0, 0})) << to_string(kind);
    EXPECT_EQ(shape(kind, 128, 8), (P{128, 4})) << to_string(kind);
    EXPECT_EQ(shape(kind, 1000, 8), (P{896, 28})) << to_string(kind);  // 250/8 = 31 -> 28
    EXPECT_EQ(shape(kind, 1000, 3), (P{960, 80})) << to_string(kind);   // 250/3 = 83 -> 80
    EXPECT_EQ(shape(kind, 1 << 30, 8), (P{1 << 30, 1 << 25})) << to_string(kind);
  }
}

TEST(NcclTests, BusBandwidthFactors) {
  for (int n : {2, 3, 8, 512}) {
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::AllReduce, n), 2.0 * (n - 1) / n);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::AllGather, n), double(n - 1) / n);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::ReduceScatter, n), double(n - 1) / n);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::AllToAll, n), double(n - 1) / n);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::Broadcast, n), 1.0);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::Reduce, n), 1.0);
  }
  EXPECT_STREQ(bus_bandwidth_formula(Collective::AllReduce), "2(n-1)/n");
  EXPECT_STREQ(bus_bandwidth_formula(Collective::AllToAll), "(n-1)/n");
  EXPECT_STREQ(bus_bandwidth_formula(Collective::Broadcast), "1");
  EXPECT_STREQ(nccl_tests_redop(Collective::ReduceScatter), "sum");
  EXPECT_STREQ(nccl_tests_redop(Collective::AllGather), "none");
  EXPECT_EQ(nccl_tests_root(Collective::Broadcast), 0);
  EXPECT_EQ(nccl_tests_root(Collective::AllReduce), -1);
}

// busbw on the ring's closed form is the channel bandwidth C B for the bandwidth-bound ring
// collectives: what the factor is for.
TEST(NcclTests, BusbwOfTheRingIsTheChannelBandwidth) {
  const UniformCost free_latency{0, B, G};
  for (int p : {2, 5, 8}) {
    for (Collective kind : {Collective::AllReduce, Collective::AllGather,
                            Collective::ReduceScatter, Collective::Broadcast}) {
      CollectiveRequest r = request(p, kind);
      r.rings = shifted_rings(p, 2);
      const double t = critical_path_s(build_schedule("nccl_ring", r), free_latency);
      EXPECT_NEAR(kS / t * bus_bandwidth_factor(kind, p), 2 * B, 1e-9 * B) << to_string(kind);
    }
  }
}

TEST(NcclTests, SweepMultipliesFromMinToMax) {
  const auto sizes = nccl_tests_sizes(8, 1 << 30, 2);
  ASSERT_EQ(sizes.size(), 28u);
  for (std::size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(sizes[i], std::uint64_t{8} << i);
  EXPECT_EQ(nccl_tests_sizes(1, 10, 3), (std::vector<std::uint64_t>{1, 3, 9}));
  EXPECT_EQ(nccl_tests_sizes(5, 5, 2), (std::vector<std::uint64_t>{5}));
  const std::uint64_t top = ~std::uint64_t{0};
  EXPECT_EQ(nccl_tests_sizes(top / 2, top, 2).size(), 2u) << "no overflow past the top";
  EXPECT_EQ(config_error_of([] { nccl_tests_sizes(9, 8, 2); }),
            "-b/--minbytes: the sweep's sizes must satisfy 0 < minbytes <= maxbytes (got 9 and 8 "
            "bytes)");
  EXPECT_EQ(config_error_of([] { nccl_tests_sizes(0, 8, 2); }).substr(0, 14), "-b/--minbytes:");
  EXPECT_EQ(config_error_of([] { nccl_tests_sizes(1, 8, 1); }),
            "-f/--stepfactor: the step factor must be at least 2 (got 1)");
}

TEST(Topology, Dgx1RingsGiveSixChannels) {
  const topo::Topology t = topo::Topology::build(topo::load_topology_config("dgx1-v100"));
  CollectiveRequest r = request(8);
  std::map<int, int> rank_of_gpu;  // ranks are GPUs in the topology's order
  for (std::size_t i = 0; i < t.gpus().size(); ++i) rank_of_gpu[t.gpus()[i]] = static_cast<int>(i);
  for (const auto& ring : topo::find_rings(t).rings) {
    std::vector<int> ranks;
    for (int gpu : ring) ranks.push_back(rank_of_gpu.at(gpu));
    r.rings.push_back(ranks);
  }
  ASSERT_EQ(r.rings.size(), 6u);
  const Schedule s = build_schedule("nccl_ring", r);
  validate(s);
  EXPECT_EQ(s.ops.size(), 48u);
  expect_time(14 * a + 14.0 / 8 * kS / (6 * B), critical_path_s(s, kCost));
}

}  // namespace
}  // namespace gpuscale::coll
