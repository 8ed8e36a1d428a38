// The `gpuscale` executable as a user runs it: listing and showing machines in each format,
// options, and bad input (one line on stderr, exit status 2, nothing on stdout).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::run_command;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

nlohmann::json show_json(const std::string& args) {
  const auto r = run_command(kGpuscale + " topo show " + args + " --format json");
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// Progress lines go through spdlog at level info, warnings at warn: SPDLOG_LEVEL chooses.
TEST(Cli, ProgressAndWarningsGoToStderrAtTheLevelSpdlogLevelSays) {
  const std::string run = " run --workload resnet-50 --gpus 1,2 --comm nccl --without input";
  const auto chatty = run_command(kGpuscale + run + " --batch 4096");
  ASSERT_EQ(chatty.status, 0) << chatty.err;
  EXPECT_THAT(chatty.err, HasSubstr("[1/2] resnet-50 nccl 1 GPUs batch 4096"));
  EXPECT_THAT(chatty.err, HasSubstr("gpuscale: warning: resnet-50 nccl 1 GPUs batch 4096 needs"));
  const auto warnings = run_command("SPDLOG_LEVEL=warn " + kGpuscale + run + " --batch 4096");
  EXPECT_THAT(warnings.err, Not(HasSubstr("[1/2]")));
  EXPECT_THAT(warnings.err, HasSubstr("gpuscale: warning:"));
  const auto quiet = run_command("SPDLOG_LEVEL=error " + kGpuscale + run + " --batch 4096");
  EXPECT_TRUE(quiet.err.empty()) << quiet.err;
  EXPECT_EQ(quiet.out, chatty.out);
}

// ctest counts a test that skipped itself as passed; the README's test command says how many.
TEST(Cli, TheTestCommandCountsSkippedTests) {
  const std::string log = testing::write_temp_file(
      "ctest.log",
      "100% tests passed, 0 tests failed out of 3\n\nThe following tests did not run:\n"
      "\t 12 - DeepBench.ReadsEveryGemmAndConvolutionRow (Skipped)\n"
      "\t 13 - DeepBench.ShippedConstantsFollowTheirDerivation (Skipped)\n");
  const std::string script = std::string(GPUSCALE_SOURCE_DIR) + "/tools/ctest-skipped.sh ";
  EXPECT_THAT(run_command(script + log).out, StartsWith("2 tests skipped (listed above"));
  const std::string clean = testing::write_temp_file("ctest-clean.log", "100% tests passed\n");
  EXPECT_EQ(run_command(script + clean).out, "0 tests skipped\n");
}

TEST(Cli, TopoListNamesEveryShippedMachine) {
  const auto r = run_command(kGpuscale + " topo list");
  ASSERT_EQ(r.status, 0);
  for (const char* name : {"dgx1-v100", "dgx1-p100", "c4140-b", "c4140-k", "c4140-m", "dss8440",
                           "r740", "t640", "r940xa", "precision-5820", "sierra-node", "lassen",
                           "dgx-2", "dgx-a100", "dgx-h100", "dgx-h100-superpod", "dgx-h200",
                           "dgx-h200-superpod", "precision-5820-pcie", "r940xa-32gb",
                           "dgx1-v100-32gb"}) {
    EXPECT_THAT(r.out, HasSubstr(name));
  }
}

TEST(Cli, Dgx1JsonHasTheMatrixTwoHopRoutesAndRings) {
  const nlohmann::json j = show_json("dgx1-v100");
  EXPECT_EQ(j["name"], "dgx1-v100");
  ASSERT_EQ(j["gpus"].size(), 8u);
  std::map<std::string, int> nvlinks;
  for (const auto& l : j["links"]) {
    if (l["kind"] != "nvlink") continue;
    nvlinks[l["a"]] += l["lanes"].get<int>();
    nvlinks[l["b"]] += l["lanes"].get<int>();
    EXPECT_DOUBLE_EQ(l["bandwidth_GBps"].get<double>(), 25.0 * l["lanes"].get<int>());
  }
  for (const auto& g : j["gpus"]) EXPECT_EQ(nvlinks[g], 6) << g;
  ASSERT_EQ(j["routes"].size(), 28u);
  const auto two_hop = std::count_if(j["routes"].begin(), j["routes"].end(),
                                     [](const auto& r) { return r["kind"] == "two_hop_gpu"; });
  EXPECT_EQ(two_hop, 12);
  for (const auto& r : j["routes"]) {
    if (r["kind"] == "two_hop_gpu") {
      EXPECT_EQ(r["path"].size(), 3u);
    }
  }
  EXPECT_EQ(j["rings"].size(), 6u);
  EXPECT_EQ(j["rings"][0].size(), 8u);
}

TEST(Cli, RoutingAndSetOptionsChangeTheMachine) {
  const nlohmann::json staged = show_json("dgx1-v100 --routing host_staged");
  EXPECT_EQ(staged["routing"], "host_staged");
  for (const auto& r : staged["routes"]) {
    if (r["src"] == "gpu0" && r["dst"] == "gpu5") {
      EXPECT_EQ(r["kind"], "host_staged");
    }
  }
  const nlohmann::json two_nodes = show_json("lassen --set cluster.nodes=2");
  EXPECT_EQ(two_nodes["gpus"].size(), 8u);
  EXPECT_EQ(two_nodes["gpus"][4], "n1.gpu0");
}

TEST(Cli, TableAndDotFormats) {
  const auto table = run_command(kGpuscale + " topo show dgx1-v100");
  ASSERT_EQ(table.status, 0);
  EXPECT_THAT(table.out, HasSubstr("gpu0 -> gpu5  two_hop_gpu"));
  EXPECT_THAT(table.out, HasSubstr("Rings: 6 over NVLink"));
  const auto dot = run_command(kGpuscale + " topo show dgx1-v100 --format dot");
  ASSERT_EQ(dot.status, 0);
  EXPECT_THAT(dot.out, StartsWith("graph \"dgx1-v100\""));
  EXPECT_THAT(dot.out, HasSubstr("\"gpu0\" -- \"gpu3\" [penwidth="));
}

TEST(Cli, SameInputSameBytes) {
  const auto first = run_command(kGpuscale + " topo show dgx1-v100 --format json");
  const auto second = run_command(kGpuscale + " topo show dgx1-v100 --format json");
  EXPECT_EQ(first.out, second.out);
}

TEST(Cli, BadInputIsOneLineOnStderrExitTwoAndNoOutput) {
  const std::string bad = testing::write_temp_file("bad.yaml", R"(name: bad
devices:
  gpu0: {kind: gpu, model: V100-SXM2, memory: 16 GB}
  gpu1: {kind: gpu, model: V100-SXM2, memory: 16 GB}
links:
  - {a: gpu0, b: gpu1, kind: nvlink, lanes: 1, lane_bandwidth: 25, latency: 1 us}
)");
  for (const std::string& args :
       {bad, std::string("/no/such/machine.yaml"), std::string("dgx1-v10"),
        std::string("lassen --set cluster.nodes=zero")}) {
    SCOPED_TRACE(args);
    const auto r = run_command(kGpuscale + " topo show " + args);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");  // nothing half-written
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  const auto r = run_command(kGpuscale + " topo show " + bad);
  EXPECT_THAT(r.err, StartsWith(bad + ":6: lane_bandwidth of link gpu0-gpu1"));
  EXPECT_THAT(r.err, HasSubstr("has no unit"));
  EXPECT_THAT(run_command(kGpuscale + " topo show dgx1-v10").err,
              HasSubstr("did you mean 'dgx1-v100'?"));
}

TEST(Cli, UnknownOptionValueIsRejected) {
  const auto r = run_command(kGpuscale + " topo show dgx1-v100 --format yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith("gpuscale: --format: yaml not in {table,json,dot,svg}"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace gpuscale
