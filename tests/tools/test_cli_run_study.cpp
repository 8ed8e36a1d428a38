// `gpuscale run` beside the study its experiment names (`study:`, --study): the measured value,
// the prediction and the error of every row the study measured, the readings the run follows,
// and the study refused when it is not one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::run_command;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;
const std::string kStudy = std::string(GPUSCALE_SOURCE_DIR) + "/tools/experiments/dgx1-study.yaml";
// LeNet alone on 1 and 2 GPUs: the study's LeNet speedups (1.62 P2P, 1.56 NCCL) and its NCCL
// overhead on one GPU (16.4%) are the rows' measurements.
const std::string kLenet = kGpuscale + " run " + kStudy + " --workload lenet --gpus 1,2";

const nlohmann::json* reading(const nlohmann::json& doc, const std::string& id) {
  for (const auto& r : doc["study"]["readings"]) {
    if (r["id"] == id) return &r;
  }
  return nullptr;
}

TEST(CliRunStudy, EachMeasuredRowHasItsMeasurementPredictionAndError) {
  const auto r = run_command(kLenet + " --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["results"].size(), 4u);
  int speedups = 0;
  for (const auto& row : doc["results"]) {
    for (const auto& m : row["measured"]) {
      if (m["metric"] != "speedup") continue;
      ++speedups;
      // The study's speedup is the row's own, and its error the closed form's.
      EXPECT_NEAR(m["predicted"].get<double>(), row["speedup"].get<double>(), 1e-9);
      const double measured = m["measured"].get<double>();
      EXPECT_DOUBLE_EQ(measured, row["comm"] == "p2p" ? 1.62 : 1.56);
      EXPECT_NEAR(m["error_pct"].get<double>(),
                  100 * (m["predicted"].get<double>() - measured) / measured, 1e-9);
    }
  }
  EXPECT_EQ(speedups, 2);  // the 2-GPU rows; a 1-GPU speedup is 1 by definition
  EXPECT_EQ(doc["study"]["suite"], "dgx1-mxnet");
  EXPECT_EQ(doc["study"]["points_in_error"], 3);  // two speedups, LeNet's NCCL overhead
  ASSERT_NE(reading(doc, "most-decode-threads"), nullptr);
  EXPECT_EQ((*reading(doc, "most-decode-threads"))["followed"], false);
  EXPECT_EQ((*reading(doc, "most-decode-threads"))["select"], "--decode-threads 39");
  EXPECT_EQ(doc["study"]["departures"].size(), 0u);
  EXPECT_EQ(run_command(kLenet + " --format json").out, r.out);  // same input, same bytes
}

TEST(CliRunStudy, TheTableShowsTheColumnsAndNamesTheReadings) {
  const auto r = run_command(kLenet);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("study          measured predicted error"));
  EXPECT_THAT(r.out, HasSubstr("speedup            1.62      "));
  EXPECT_THAT(r.out, HasSubstr("framework: mxnet; precision: fp32"));
  EXPECT_THAT(r.out, HasSubstr("readings: the suite's headline (batch per GPU; mxnet's 4 decode "
                               "threads; GoogLeNet = googlenet)"));
  EXPECT_THAT(r.out, HasSubstr("most-decode-threads  39 decode threads: add --decode-threads 39"));
  // GoogLeNet is not in this run, so its reading changes nothing here.
  EXPECT_THAT(r.out, HasSubstr("it changes no workload of this run"));
}

TEST(CliRunStudy, AReadingTheRunFollowsIsNamedAndWhatItChangesIsNoDeparture) {
  const auto r = run_command(kLenet + " --decode-threads 39 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ((*reading(doc, "most-decode-threads"))["followed"], true);
  EXPECT_EQ(doc["study"]["departures"].size(), 0u);
  const auto other = nlohmann::json::parse(run_command(kLenet + " --decode-threads 8 --format json").out);
  ASSERT_EQ(other["study"]["departures"].size(), 1u);
  EXPECT_THAT(other["study"]["departures"][0].get<std::string>(), HasSubstr("8 decode threads"));
}

// The study's batches read as MXNet's total --batch-size: a global batch of 16 shared by the GPUs.
TEST(CliRunStudy, AGlobalBatchFollowsTheTotalBatchReading) {
  const auto headline = nlohmann::json::parse(run_command(kLenet + " --format json").out);
  EXPECT_EQ((*reading(headline, "total-batch"))["select"], "--global-batch 16 in place of --batch");
  const auto r = run_command(kLenet + " --global-batch 16 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ((*reading(doc, "total-batch"))["followed"], true);
  EXPECT_EQ(doc["study"]["departures"].size(), 0u);
  int speedups = 0;
  for (const auto& row : doc["results"]) {
    EXPECT_EQ(row["batch"].get<int>() * row["gpus"].get<int>(), 16);
    for (const auto& m : row["measured"]) speedups += m["metric"] == "speedup" ? 1 : 0;
  }
  EXPECT_EQ(speedups, 2);
}

TEST(CliRunStudy, AWhatIfIsSaidToBeOne) {
  const auto r = run_command(kLenet + " --set link_kinds.nvlink.lane_bandwidth=50GB/s");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("this run departs: the machine is changed by --set"));
}

TEST(CliRunStudy, AnotherMachineShowsNoMeasurement) {
  const auto r = run_command(kLenet + " --topology dgx-h100 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  for (const auto& row : doc["results"]) EXPECT_EQ(row["measured"].size(), 0u);
  EXPECT_THAT(doc["study"]["departures"][0].get<std::string>(), HasSubstr("no measurement applies"));
}

TEST(CliRunStudy, StudyNoneLeavesTheColumnsOut) {
  const auto r = run_command(kLenet + " --study none");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("measured")));
  EXPECT_THAT(r.out, HasSubstr("framework: mxnet; precision: fp32"));
}

TEST(CliRunStudy, AStudyThatIsNoneIsRefusedBeforeAnythingRuns) {
  auto r = run_command(kLenet + " --study no-such-suite");
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("--study"));
  EXPECT_THAT(r.err, HasSubstr("no-such-suite"));
  EXPECT_THAT(r.err, Not(HasSubstr("[1/")));  // nothing simulated
  r = run_command(kLenet + " --study pipedream-v100");
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("not of `run`'s configurations"));

  const std::filesystem::path file = std::filesystem::temp_directory_path() / "gpuscale-study-typo.yaml";
  std::ofstream(file) << "workload: lenet\ngpus: [1, 2]\nstudy: dgx1-mxnett\n";
  r = run_command(kGpuscale + " run " + file.string());
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr(file.string() + ":3"));
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace gpuscale
