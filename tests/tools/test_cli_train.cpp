// `gpuscale train` as a user runs it: GPT-3 175B with TP 8 and PP 16 on DGX H200 nodes, its
// bubble and memory per GPU; the layout sweep; an invalid layout's one-line error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

using ::testing::HasSubstr;
using testing::run_command;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

TEST(CliTrain, Gpt3Tp8Pp16OnDgxH200NodesPrintsBubbleAndMemory) {
  const auto r = run_command(kGpuscale + " train --topology dgx-h200-superpod --workload gpt3-175b"
                             " --tp 8 --pp 16 --gpus 1024 --micro-batch 1 --global-batch 1536"
                             " --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["dp"], 8);
  EXPECT_EQ(j["micro_batches"], 192);
  EXPECT_DOUBLE_EQ(j["bubble_closed_form"].get<double>(), 15.0 / 207);
  // Simulated: at least the closed form (sends between stages only add to it).
  EXPECT_GE(j["bubble"].get<double>(), 15.0 / 207 * 0.99);
  // Stage 0: 16 x 1,440,863,232 bytes of weights, gradients and Adam, 96 x 23 s b h activations.
  EXPECT_NEAR(j["memory_per_gpu_bytes"].get<double>(), 16 * 1440863232.0 + 96 * 578813952.0, 1);
  EXPECT_TRUE(j["fits"].get<bool>());
  EXPECT_GT(j["iteration_s"].get<double>(), 0);
  EXPECT_GT(j["mfu"].get<double>(), 0);
  EXPECT_LT(j["mfu"].get<double>(), 1);
  EXPECT_EQ(j["stages"].size(), 16u);

  const auto table = run_command(kGpuscale + " train --topology dgx-h200-superpod --tp 8 --pp 16"
                                 " --dp 8");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("layout: TP 8 x PP 16 x DP 8, m = 192"));
  EXPECT_THAT(table.out, HasSubstr("bubble, (p-1)/(m+p-1)              7.25 %"));
  EXPECT_THAT(table.out, HasSubstr("memory per GPU (fullest stage)     78.6 GB"));
}

TEST(CliTrain, SweepListsValidLayoutsFastestFirst) {
  const auto r = run_command(kGpuscale + " train --topology dgx-h200-superpod --sweep --gpus 64"
                             " --tp 4,8 --pp 4,8,16 --global-batch 64 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto layouts = nlohmann::json::parse(r.out)["layouts"];
  ASSERT_EQ(layouts.size(), 5u);  // t p = 128 does not fit 64 GPUs
  for (size_t i = 1; i < layouts.size(); ++i) {
    EXPECT_LE(layouts[i - 1]["iteration_s"].get<double>(), layouts[i]["iteration_s"].get<double>());
  }
  for (const auto& l : layouts) {
    EXPECT_EQ(l["tp"].get<int>() * l["pp"].get<int>() * l["dp"].get<int>(), 64);
  }
}

TEST(CliTrain, InvalidLayoutIsOneLineError) {
  const auto r = run_command(kGpuscale + " train --topology dgx-h200-superpod --tp 16 --pp 8 --dp 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "--tp: 16 is more than the 8 GPUs of a node (tensor parallelism "
                   "stays on a node's NVLink)\n");
  const auto pp = run_command(kGpuscale + " train --tp 8 --pp 7 --dp 1");
  EXPECT_EQ(pp.status, 2);
  EXPECT_THAT(pp.err, HasSubstr("--pp: 7 does not divide the model's 96 transformer layers"));
}

}  // namespace
}  // namespace gpuscale
