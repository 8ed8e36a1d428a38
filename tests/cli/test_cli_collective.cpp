// `gpuscale collective` as a user runs it: an ideal NCCL ring allreduce on a DGX-1V against the
// closed form derived from the machine's link figures and rings, nccl-tests' busbw/algbw
// relation, the same input giving the same bytes, and an unknown algorithm (one line, exit 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <utility>

#include "tests/support/test_support.hpp"
#include "topologies/src/rings.hpp"
#include "topologies/src/routing.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale {
namespace {

using ::testing::HasSubstr;
using testing::run_command;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

nlohmann::json collective_json(const std::string& args) {
  const auto r = run_command(kGpuscale + " collective " + args + " --format json");
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out)["results"];
}

// nccl_ring with the ideal protocol (no protocol latency, one wire byte per payload byte) on C
// channel rings of p GPUs: every ring edge is one flow carrying 2(p-1)/p * S/C bytes that pays its
// route latency alpha 2(p-1) times, so
//   T = 2(p-1) alpha + 2(p-1)/p * S / (C B),
// B the bandwidth of a channel's narrowest hop, a link direction's effective bandwidth shared by
// the rings crossing it, alpha the largest route latency of a ring edge.
double ideal_ring_allreduce_s(const std::string& machine, double bytes) {
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
  double channel_Bps = 1e30, alpha = 0;
  for (const auto& ring : rings) {
    for (size_t i = 0; i < ring.size(); ++i) {
      double latency = 0;
      for (const topo::Leg& leg : router.route(ring[i], ring[(i + 1) % ring.size()]).legs) {
        latency += leg.latency(t).value;
        for (const topo::Hop& hop : leg.hops) {
          const double share = t.links()[static_cast<size_t>(hop.link)].effective_bandwidth().value /
                               rings_on[{hop.link, hop.forward}];
          channel_Bps = std::min(channel_Bps, share);
        }
      }
      alpha = std::max(alpha, latency);
    }
  }
  const double p = static_cast<double>(t.gpus().size());
  const double channels = static_cast<double>(rings.size());
  return 2 * (p - 1) * alpha + 2 * (p - 1) / p * bytes / (channels * channel_Bps);
}

TEST(CliCollective, IdealNcclRingAllreduceMatchesTheClosedForm) {
  const double bytes = 100.0 * 1024 * 1024;
  const auto rows = collective_json("--topology dgx1-v100 --algo nccl --gpus 8 --bytes 100MiB "
                                    "--protocol ideal");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["bytes"].get<double>(), bytes);
  EXPECT_EQ(rows[0]["protocol"], "ideal");
  const double expected = ideal_ring_allreduce_s("dgx1-v100", bytes);
  EXPECT_NEAR(rows[0]["time_s"].get<double>() / expected, 1.0, 0.01) << expected;
}

TEST(CliCollective, BusbwIsAlgbwTimesTwoNMinusOneOverN) {
  for (const auto& row : collective_json("--algo ring --gpus 2,4,8 --bytes 1e6,64MiB")) {
    const double n = row["gpus"].get<double>();
    const double algbw = row["algbw_Bps"].get<double>();
    EXPECT_DOUBLE_EQ(algbw, row["bytes"].get<double>() / row["time_s"].get<double>());
    EXPECT_DOUBLE_EQ(row["busbw_Bps"].get<double>(), algbw * 2 * (n - 1) / n) << row.dump();
  }
}

TEST(CliCollective, JsonIsTheSameBytesTwice) {
  const std::string command =
      kGpuscale + " collective --topology lassen --algo nccl --gpus 8,16 --bytes 1MiB,100MiB --format json";
  const auto first = run_command(command);
  ASSERT_EQ(first.status, 0) << first.err;
  const auto rows = nlohmann::json::parse(first.out)["results"];
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    for (const char* key : {"topology", "algo", "collective", "gpus", "bytes", "protocol", "time_s",
                            "algbw_Bps", "busbw_Bps", "simulated_activities"}) {
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

TEST(CliCollective, BadSizeOrTooManyGpusIsOneLineAndExitTwo) {
  for (const char* args : {" --bytes=-5", " --bytes '12 parsecs'", " --gpus 16"}) {
    const auto r = run_command(kGpuscale + " collective" + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace gpuscale
