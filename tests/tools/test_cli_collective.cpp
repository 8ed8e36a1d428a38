// `gpuscale collective` as a user runs it: ideal NCCL ring collectives on a DGX-1V against the
// closed forms derived from the machine's link figures and rings, nccl-tests' size sweep, rounding,
// columns and busbw/algbw relation, the same input giving the same bytes, and bad input (an
// unknown algorithm, one that lacks the collective, sweep options apart: one line, exit 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "tests/support/test_support.hpp"
#include "topologies/src/rings.hpp"
#include "topologies/src/routing.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::run_command;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

nlohmann::json collective_json(const std::string& args) {
  const auto r = run_command(kGpuscale + " collective " + args + " --format json");
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out)["results"];
}

// The figures of a machine's NCCL rings: C channel rings of p GPUs; B the bandwidth of a
// channel's narrowest hop, a link direction's effective bandwidth shared by the rings crossing it;
// alpha the largest route latency of a ring edge.
struct RingFigures {
  double p = 0, channels = 0, channel_Bps = 1e30, alpha_s = 0;
};

RingFigures ring_figures(const std::string& machine) {
  const topo::Topology t = topo::Topology::build(topo::load_topology_config(machine));
  const topo::Router router(t, t.default_routing());
  const auto rings = topo::find_rings(t).rings;
  std::map<std::pair<int, bool>, int> rings_on;  // rings crossing each link direction
  for (const auto& ring : rings) {
    for (size_t i = 0; i < ring.size(); ++i) {
      for (const topo::Leg& leg : router.route(ring[i], ring[(i + 1) % ring.size()]).legs) {
        for (const topo::Hop& hop : leg.hops) ++rings_on[{hop.link, hop.forward}];
      }
    }
  }
  RingFigures f{static_cast<double>(t.gpus().size()), static_cast<double>(rings.size())};
  for (const auto& ring : rings) {
    for (size_t i = 0; i < ring.size(); ++i) {
      double latency = 0;
      for (const topo::Leg& leg : router.route(ring[i], ring[(i + 1) % ring.size()]).legs) {
        latency += leg.latency(t).value;
        for (const topo::Hop& hop : leg.hops) {
          const topo::Link& link = t.links()[static_cast<size_t>(hop.link)];
          const double share =
              link.effective_bandwidth().value / rings_on[{hop.link, hop.forward}];
          f.channel_Bps = std::min(f.channel_Bps, share);
        }
      }
      f.alpha_s = std::max(f.alpha_s, latency);
    }
  }
  return f;
}

// nccl_ring with the ideal protocol (no protocol latency, one wire byte per payload byte) makes
// `passes` passes round each channel's ring (allreduce 2, allgather and reducescatter 1): every
// ring edge is one flow carrying passes (p-1)/p * S/C bytes that pays its route latency alpha
// passes (p-1) times, so
//   T = passes (p-1) alpha + passes (p-1)/p * S / (C B).
double ideal_ring_s(const RingFigures& f, int passes, double bytes) {
  const double steps = passes * (f.p - 1);
  return steps * f.alpha_s + steps / f.p * bytes / (f.channels * f.channel_Bps);
}

TEST(CliCollective, IdealNcclRingAllreduceMatchesTheClosedForm) {
  const double bytes = 100.0 * 1024 * 1024;
  const auto rows = collective_json("--topology dgx1-v100 --algo nccl --gpus 8 --bytes 100MiB "
                                    "--protocol ideal");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["size_B"].get<double>(), bytes);
  EXPECT_EQ(rows[0]["protocol"], "ideal");
  const double expected = ideal_ring_s(ring_figures("dgx1-v100"), 2, bytes);
  EXPECT_NEAR(rows[0]["time_s"].get<double>() / expected, 1.0, 0.01) << expected;
}

// Only schedules that follow NCCL's protocols name one: an MPI library's ring and MXNet's p2p
// copies say "-" (and --protocol changes nothing for them); aluminum names NCCL's protocol where
// it runs NCCL's ring (large buffers) and "-" where it runs MPI's recursive doubling (small ones
// at scale).
TEST(CliCollective, OnlyNcclsSchedulesNameAProtocol) {
  auto protocol_and_time = [](const std::string& algo, const std::string& more) {
    const auto rows = collective_json("--topology lassen --gpus 64 --algo " + algo + " " + more);
    EXPECT_EQ(rows.size(), 1u) << algo;
    return std::pair{rows[0]["protocol"].get<std::string>(), rows[0]["time_s"].get<double>()};
  };
  for (const std::string algo : {"ring", "p2p", "recursive_doubling", "hierarchical"}) {
    const auto [ll_protocol, ll_s] = protocol_and_time(algo, "--bytes 1MiB --protocol ll");
    const auto [simple_protocol, simple_s] =
        protocol_and_time(algo, "--bytes 1MiB --protocol simple");
    EXPECT_EQ(ll_protocol, "-") << algo;
    EXPECT_EQ(simple_protocol, "-") << algo;
    EXPECT_EQ(ll_s, simple_s) << algo;
  }
  EXPECT_EQ(protocol_and_time("nccl", "--bytes 1MiB --protocol ll").first, "ll");
  EXPECT_EQ(protocol_and_time("aluminum", "--bytes 1GiB --protocol simple").first, "simple");
  EXPECT_EQ(protocol_and_time("aluminum", "--bytes 1KiB --protocol simple").first, "-");
}

// Allgather and reducescatter are one pass of the same rings: half the allreduce's time each
// (the same bytes per step, half the steps), so together they take the allreduce's time.
TEST(CliCollective, IdealAllgatherAndReducescatterAreHalvesOfTheAllreduce) {
  const double bytes = 100.0 * 1024 * 1024;
  const std::string args = " --topology dgx1-v100 --gpus 8 --bytes 100MiB --protocol ideal";
  double halves = 0;
  for (const char* kind : {"allgather", "reducescatter"}) {
    const auto rows = collective_json(std::string("--collective ") + kind + args);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["collective"], kind);
    EXPECT_EQ(rows[0]["size_B"].get<double>(), bytes);
    const double expected = ideal_ring_s(ring_figures("dgx1-v100"), 1, bytes);
    EXPECT_NEAR(rows[0]["time_s"].get<double>() / expected, 1.0, 0.01) << kind;
    halves += rows[0]["time_s"].get<double>();
  }
  const double allreduce = collective_json(args)[0]["time_s"].get<double>();
  EXPECT_NEAR(halves / allreduce, 1.0, 0.01);
}

// All-to-all on the DGX-1V's first four GPUs, a quad in which every pair has NVLink of its own:
// each GPU's three sends of S/4 share no link direction, so
//   T = max over pairs (latency + (S/4) / bandwidth)   (ideal protocol).
TEST(CliCollective, IdealAlltoallOnDirectLinksIsTheSlowestPair) {
  const topo::Topology t = topo::Topology::build(topo::load_topology_config("dgx1-v100"));
  const topo::Router router(t, t.default_routing());
  const double bytes = 64.0 * 1024 * 1024;
  std::map<std::pair<int, bool>, int> flows_on;
  double expected = 0;
  for (int src = 0; src < 4; ++src) {
    for (int dst = 0; dst < 4; ++dst) {
      if (src == dst) continue;
      const topo::Route route = router.route(t.gpus()[src], t.gpus()[dst]);
      ASSERT_EQ(route.legs.size(), 1u) << src << "->" << dst << ": the quad is NVLinked";
      const topo::Leg& leg = route.legs[0];
      for (const topo::Hop& hop : leg.hops) ++flows_on[{hop.link, hop.forward}];
      expected = std::max(expected, leg.latency(t).value + bytes / 4 / leg.bandwidth(t).value);
    }
  }
  for (const auto& [direction, flows] : flows_on) ASSERT_EQ(flows, 1) << "a shared link";
  const auto rows = collective_json("--collective alltoall --gpus 4 --bytes 64MiB "
                                    "--protocol ideal");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0]["time_s"].get<double>() / expected, 1.0, 0.01) << expected;
  EXPECT_EQ(rows[0]["count"], 4 * 1024 * 1024) << "elements per peer";
}

// Two Sierra nodes over dual-rail EDR: the job's two rings leave each node through a NIC each
// (topo::find_rings), so a large ideal allreduce's busbw approaches two NICs, not one. A NIC
// passes the narrower of its EDR port (12.5 GB/s x 0.98) and its PCIe Gen4 x8 link to the socket
// (8 x 1.969 GB/s x 0.76; sierra-node.yaml).
TEST(CliCollective, IdealRingAllreduceAcrossLassenNodesUsesBothRails) {
  const double two_ports_Bps = 2 * std::min(12.5e9 * 0.98, 8 * 1.969e9 * 0.76);
  const auto results = collective_json(
      "--topology lassen --set cluster.nodes=2 --gpus 8 --bytes 1GiB --protocol ideal");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_NEAR(results[0]["busbw_Bps"].get<double>() / two_ports_Bps, 1.0, 0.01) << results.dump();
}

TEST(CliCollective, BusbwIsAlgbwTimesTwoNMinusOneOverN) {
  for (const auto& row : collective_json("--algo ring --gpus 2,4,8 --bytes 1e6,64MiB")) {
    const double n = row["gpus"].get<double>();
    const double algbw = row["algbw_Bps"].get<double>();
    EXPECT_DOUBLE_EQ(algbw, row["size_B"].get<double>() / row["time_s"].get<double>());
    EXPECT_DOUBLE_EQ(row["busbw_Bps"].get<double>(), algbw * 2 * (n - 1) / n) << row.dump();
  }
}

// nccl-tests' factors (doc/PERFORMANCE.md, "Summary"), written out here rather than taken from
// the code under test.
TEST(CliCollective, BusbwFactorIsNcclTestsForEachCollective) {
  const std::map<std::string, std::pair<double, double>> factor = {  // (n-1)/n and 1 weights
      {"allreduce", {2, 0}}, {"allgather", {1, 0}}, {"reducescatter", {1, 0}},
      {"alltoall", {1, 0}},  {"broadcast", {0, 1}}, {"reduce", {0, 1}}};
  for (const auto& [kind, weights] : factor) {
    const auto rows = collective_json("--collective " + kind + " --gpus 4,8 --bytes 1MiB");
    ASSERT_EQ(rows.size(), 2u) << kind;
    for (const auto& row : rows) {
      const double n = row["gpus"].get<double>();
      const double algbw = row["algbw_Bps"].get<double>();
      EXPECT_GT(algbw, 0) << kind;
      EXPECT_DOUBLE_EQ(algbw, row["size_B"].get<double>() / row["time_s"].get<double>()) << kind;
      const double f = weights.first * (n - 1) / n + weights.second;
      EXPECT_DOUBLE_EQ(row["busbw_Bps"].get<double>(), algbw * f) << kind << " n=" << n;
      EXPECT_EQ(row["redop"], kind.find("reduce") != std::string::npos ? "sum" : "none") << kind;
      EXPECT_EQ(row["root"], kind == "broadcast" || kind == "reduce" ? 0 : -1) << kind;
    }
  }
}

// `-b 8 -e 1G -f 2` as nccl-tests takes it: 1G is 2^30 bytes, 28 sizes 8, 16, ..., 2^30, each a
// whole number of floats.
TEST(CliCollective, SweepFromMinToMaxByFactorGivesNcclTestsSizes) {
  const auto rows = collective_json("-b 8 -e 1G -f 2");
  ASSERT_EQ(rows.size(), 28u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::uint64_t size = std::uint64_t{8} << i;
    EXPECT_EQ(rows[i]["size_B"].get<std::uint64_t>(), size) << i;
    EXPECT_EQ(rows[i]["count"].get<std::uint64_t>(), size / 4) << i;
    EXPECT_EQ(rows[i]["type"], "float");
    EXPECT_EQ(rows[i]["collective"], "allreduce");
    EXPECT_GT(rows[i]["time_s"].get<double>(), 0) << i;
    if (i > 0) {
      EXPECT_GT(rows[i]["time_s"].get<double>(), rows[i - 1]["time_s"].get<double>()) << i;
    }
  }
}

// allgather's per-rank count is count/ranks in multiples of 4 floats: on 8 GPUs sizes under
// 128 bytes gather nothing (nccl-tests prints them as 0), and 1000 bytes become 896.
TEST(CliCollective, AllgatherSizesRoundAsNcclTests) {
  const auto rows = collective_json("--collective allgather --gpus 8 -b 8 -e 1K -f 2");
  const std::vector<std::uint64_t> sizes = {0, 0, 0, 0, 128, 256, 512, 1024};
  ASSERT_EQ(rows.size(), sizes.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["size_B"].get<std::uint64_t>(), sizes[i]) << i;
    EXPECT_EQ(rows[i]["count"].get<std::uint64_t>(), sizes[i] / 32) << i;
    EXPECT_EQ(rows[i]["time_s"].get<double>() > 0, sizes[i] > 0) << i;
    EXPECT_EQ(rows[i]["busbw_Bps"].get<double>() > 0, sizes[i] > 0) << i;
  }
  const auto odd = collective_json("--collective allgather --gpus 8 --bytes 1000");
  EXPECT_EQ(odd[0]["size_B"].get<std::uint64_t>(), 896u);
}

TEST(CliCollective, TableHasNcclTestsColumns) {
  const auto r = run_command(kGpuscale + " collective --collective broadcast -b 1M -e 4M -f 4");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("dgx1-v100: nccl broadcast (algbw = size / time; busbw = algbw x "
                               "1, as nccl-tests; GB = 1e9 B)"));
  for (const char* column : {"gpus", "size", "count", "type", "redop", "root", "protocol", "time",
                             "algbw", "busbw", "(B)", "(elements)", "(us)", "(GB/s)"}) {
    EXPECT_THAT(r.out, HasSubstr(column));
  }
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\n +8 +1048576 +262144 +float +none +0 "));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\n +8 +4194304 +1048576 +float +none +0 "));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 6) << r.out;  // title, blank, 2+2
}

TEST(CliCollective, JsonIsTheSameBytesTwice) {
  const std::string command =
      kGpuscale + " collective --topology lassen --algo nccl --gpus 8,16 --bytes 1MiB,100MiB --format json";
  const auto first = run_command(command);
  ASSERT_EQ(first.status, 0) << first.err;
  const auto rows = nlohmann::json::parse(first.out)["results"];
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    for (const char* key : {"topology", "algo", "collective", "gpus", "protocol", "size_B", "count",
                            "type", "redop", "root", "time_s", "algbw_Bps", "busbw_Bps",
                            "simulated_activities"}) {
      EXPECT_TRUE(row.contains(key)) << key;
    }
    EXPECT_GT(row["time_s"].get<double>(), 0);
  }
  EXPECT_EQ(run_command(command).out, first.out);
}

TEST(CliCollective, UnknownAlgoIsOneLineNamingTheChoicesAndExitTwo) {
  const auto r = run_command(kGpuscale + " collective --algo allgather");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const char* choice : {"nccl", "nccl_tree", "ring", "hierarchical", "p2p"}) {
    EXPECT_THAT(r.err, HasSubstr(choice));
  }
}

TEST(CliCollective, CsvHasTheJsonFields) {
  const auto r = run_command(kGpuscale + " collective --collective reducescatter --gpus 4 "
                                         "--bytes 1MiB --format csv");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("topology,algo,collective,gpus,protocol,size_B,count,"
                                           "type,redop,root,time_s,algbw_Bps,busbw_Bps\n"));
  EXPECT_THAT(r.out, HasSubstr("\ndgx1-v100,nccl,reducescatter,4,"));
  EXPECT_THAT(r.out, HasSubstr(",1048576,65536,float,sum,-1,"));
}

// An algorithm without the collective: one line naming the --algo values that have it.
TEST(CliCollective, UnsupportedCollectiveIsOneLineNamingTheAlgorithmsThatDoIt) {
  const auto r = run_command(kGpuscale + " collective --algo nccl_tree --collective allgather");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(r.err, "comm method 'nccl_tree' does not implement allgather (methods that do: "
                   "nccl)\n");
  const auto b = run_command(kGpuscale + " collective --algo ring --collective broadcast");
  EXPECT_EQ(b.status, 2);
  EXPECT_THAT(b.err, HasSubstr("(methods that do: nccl, binomial_tree, p2p)"));
}

// A collective simulated flow by flow over thousands of GPUs is said to be slow before the wait;
// one evaluated from link loads is not; an algorithm lacking the collective is still the error.
TEST(CliCollective, ASlowCollectiveSaysSoFirst) {
  const auto slow = run_command("timeout 60 " + kGpuscale + " collective --topology lassen "
                                "--gpus 2052 --algo rabenseifner --bytes 4KiB");
  EXPECT_EQ(slow.status, 0) << slow.err;
  EXPECT_THAT(slow.err, HasSubstr("warning: rabenseifner allreduce on 2052 GPUs is simulated "
                                  "flow by flow"));
  for (const std::string algo : {"ring", "nccl_auto", "nccl_tree", "binomial_tree"}) {
    const auto quick = run_command(kGpuscale + " collective --topology lassen --gpus 2052 "
                                   "--bytes 4KiB --algo " + algo);
    EXPECT_EQ(quick.status, 0) << algo << ": " << quick.err;
    EXPECT_THAT(quick.err, Not(HasSubstr("warning"))) << algo;
  }
  // Aluminum runs MPI's recursive doubling for small buffers at scale, flow by flow off a power of
  // two: it is named.
  const auto aluminum = run_command("timeout 60 " + kGpuscale + " collective --topology lassen "
                                    "--gpus 2052 --bytes 4KiB --algo aluminum");
  EXPECT_EQ(aluminum.status, 0) << aluminum.err;
  EXPECT_THAT(aluminum.err, HasSubstr("warning: aluminum allreduce on 2052 GPUs is simulated flow "
                                      "by flow, which takes seconds to minutes: "
                                      "recursive_doubling's rounds"));
  const auto lacking = run_command(kGpuscale + " collective --topology lassen --gpus 2052 "
                                   "--algo ring --collective broadcast");
  EXPECT_EQ(lacking.status, 2);
  EXPECT_THAT(lacking.err, Not(HasSubstr("warning")));
}

TEST(CliCollective, BadSizeOrTooManyGpusIsOneLineAndExitTwo) {
  for (const char* args : {" --bytes=-5", " --bytes '12 parsecs'", " --gpus 16", " -b 8",
                           " -e 1G", " -b 8 -e 1G --bytes 1MiB", " -b 8 -e 1G -f 1",
                           " -b 1G -e 8", " -b 8 -e 1X", " --collective allgater",
                           " -f 4 --bytes 1MiB"}) {
    const auto r = run_command(kGpuscale + " collective" + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace gpuscale
