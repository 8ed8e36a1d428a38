// `gpuscale topo route` as a student runs it: a two-hop copy on the DGX-1 goes through a GPU
// linked to both ends, its simulated time is the closed form, a direct pair is one NVLink hop,
// host staging goes through a CPU over PCIe, and bad input is one line with exit status 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

using ::testing::HasSubstr;
using testing::run_command;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

nlohmann::json route_json(const std::string& args) {
  const auto r = run_command(kGpuscale + " topo route " + args + " --format json");
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(CliRoute, Dgx1Gpu0ToGpu5GoesInTwoNvlinkLegsThroughAGpuLinkedToBoth) {
  const nlohmann::json j = route_json("dgx1-v100 gpu0 gpu5 --bytes 100MiB");
  EXPECT_EQ(j["kind"], "two_hop_gpu");
  EXPECT_TRUE(j["store_and_forward"].get<bool>());
  ASSERT_EQ(j["legs"].size(), 2u);
  const auto& first = j["legs"][0];
  const auto& second = j["legs"][1];
  ASSERT_EQ(first["hops"].size(), 1u);
  ASSERT_EQ(second["hops"].size(), 1u);
  EXPECT_EQ(first["hops"][0]["from"], "gpu0");
  EXPECT_EQ(first["hops"][0]["kind"], "nvlink");
  EXPECT_EQ(second["hops"][0]["to"], "gpu5");
  EXPECT_EQ(second["hops"][0]["kind"], "nvlink");
  const std::string via = first["hops"][0]["to"];
  EXPECT_EQ(second["hops"][0]["from"], via);
  EXPECT_EQ(j["via"], via);
  EXPECT_THAT(via, ::testing::StartsWith("gpu"));
}

TEST(CliRoute, SimulatedCopyMatchesTheClosedForm) {
  for (const char* args : {"dgx1-v100 gpu0 gpu5 --bytes 100MiB", "dgx1-v100 gpu0 gpu3 --bytes 1e6",
                           "dgx1-v100 gpu0 gpu5 --routing host_staged --bytes 64MB"}) {
    const nlohmann::json j = route_json(args);
    const double closed = j["closed_form_s"].get<double>();
    double sum_of_legs = 0;
    for (const auto& leg : j["legs"]) {
      sum_of_legs += leg["latency_us"].get<double>() * 1e-6 +
                     j["bytes"].get<double>() / (leg["bottleneck_GBps"].get<double>() * 1e9);
    }
    EXPECT_NEAR(sum_of_legs / closed, 1.0, 1e-9) << args;
    EXPECT_NEAR(j["simulated_s"].get<double>() / closed, 1.0, 0.01) << args;
  }
}

TEST(CliRoute, Dgx1Gpu0ToGpu3IsOneNvlinkHopOfTwoLanes) {
  const nlohmann::json j = route_json("dgx1-v100 gpu0 gpu3");
  EXPECT_EQ(j["kind"], "nvlink");
  EXPECT_FALSE(j["store_and_forward"].get<bool>());
  EXPECT_TRUE(j["via"].is_null());
  ASSERT_EQ(j["legs"].size(), 1u);
  ASSERT_EQ(j["legs"][0]["hops"].size(), 1u);
  const auto& hop = j["legs"][0]["hops"][0];
  EXPECT_EQ(hop["kind"], "nvlink");
  EXPECT_EQ(hop["lanes"], 2);
  EXPECT_EQ(j["bytes"].get<double>(), 100.0 * 1024 * 1024);  // the default size
}

TEST(CliRoute, HostStagedCopyLandsInACpusMemoryOverPcie) {
  const nlohmann::json j = route_json("dgx1-v100 gpu0 gpu5 --routing host_staged");
  EXPECT_EQ(j["kind"], "host_staged");
  ASSERT_EQ(j["legs"].size(), 2u);
  EXPECT_EQ(j["via"], "cpu0");
  const auto& to_host = j["legs"][0];
  EXPECT_EQ(to_host["path"].back(), "cpu0");
  for (const auto& hop : to_host["hops"]) EXPECT_EQ(hop["kind"], "pcie");
  const auto& from_host = j["legs"][1];
  EXPECT_EQ(from_host["hops"].front()["kind"], "qpi");  // into the other socket
  EXPECT_EQ(from_host["hops"].back()["kind"], "pcie");
  const auto r = run_command(kGpuscale + " topo route dgx1-v100 gpu0 gpu5 --routing host_staged");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("leg 1: gpu0 > plx0 > cpu0"));
  EXPECT_THAT(r.out, HasSubstr("simulated on SimGrid"));
}

TEST(CliRoute, BadInputIsOneLineExitTwoAndNothingOnStdout) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"dgx1-v100 gpu0 gpu9", "has no device 'gpu9'"},
      {"dgx1-v100 cpu0 gpu5", "cpu0 is a cpu, not a GPU"},
      {"dgx1-v100 gpu3 gpu3", "name two different GPUs"},
      {"dgx1-v10 gpu0 gpu5", "did you mean 'dgx1-v100'?"},
      {"dgx1-v100 gpu0 gpu5 --bytes -3", "--bytes"},
      {"dgx1-v100 gpu0 gpu5 --routing hop", "--routing"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(args);
    const auto r = run_command(kGpuscale + " topo route " + args);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(message));
  }
}

}  // namespace
}  // namespace gpuscale
