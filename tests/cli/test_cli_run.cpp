// `gpuscale run` as a user runs it: the issue's JSON fields, the same input giving the same bytes,
// and bad input (one line, exit status 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

using testing::run_command;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

TEST(CliRun, Dgx1ResNet50JsonHasTheIssuesFields) {
  const std::string command = kGpuscale +
      " run --topology dgx1-v100 --workload resnet-50 --gpus 1,2,4,8 --comm p2p,nccl --format json";
  const auto r = run_command(command);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 8u);
  for (const auto& row : j["results"]) {
    for (const char* key : {"topology", "workload", "comm", "gpus", "batch", "scaling", "iteration_s",
                            "epoch_s", "speedup", "throughput_img_s", "fpbp_s", "wu_s",
                            "exposed_comm_s", "memory_gb", "link_utilisation"}) {
      EXPECT_TRUE(row.contains(key)) << key;
    }
    EXPECT_GT(row["iteration_s"].get<double>(), 0);
    if (row["gpus"] == 1) EXPECT_DOUBLE_EQ(row["speedup"].get<double>(), 1.0);
  }
  EXPECT_EQ(run_command(command).out, r.out);  // same input, same bytes
}

TEST(CliRun, UnknownMethodOrTooManyGpusIsOneLineAndExitTwo) {
  for (const char* args : {" run --comm rnig", " run --gpus 16"}) {
    const auto r = run_command(kGpuscale + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace gpuscale
