// `gpuscale train` as a user runs it: GPT-3 175B with TP 8 and PP 16 on DGX H200 nodes, its
// bubble and memory per GPU; the layout sweep; an invalid layout's one-line error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>

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
  // Stage 0 at GPT-3's fp16: 20 x 1,440,863,232 bytes of weights, gradients and Adam with FP32
  // main weights and gradients (Megatron-LM's table), 96 x 23 s b h activations.
  EXPECT_EQ(j["precision"], "fp16");
  EXPECT_NEAR(j["memory_per_gpu_bytes"].get<double>(), 20 * 1440863232.0 + 96 * 578813952.0, 1);
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
  EXPECT_THAT(table.out, HasSubstr("memory per GPU (fullest stage)     84.4 GB"));
  EXPECT_THAT(table.out, HasSubstr("precision fp16: Megatron-LM --fp16"));
}

// --precision as Megatron-LM runs each recipe, on 8 H200 training the 1.7B GPT data-parallel:
// BF16 keeps and reduces FP32 gradients (twice FP16's bytes, 18 bytes per parameter against
// 20), FP8 runs the transformer layers' GEMMs at twice BF16's rate; a recipe Megatron-LM lacks,
// or a GPU without FP8, is a one-line error.
TEST(CliTrain, PrecisionRecipesAsMegatronRunsThem) {
  const auto train = [](const std::string& args) {
    return run_command(kGpuscale + " train --topology dgx-h200-superpod --workload mcore-gpt-1.7b"
                                   " --tp 1 --pp 1 --dp 8 --global-batch 8 --format json " + args);
  };
  std::map<std::string, nlohmann::json> at;
  for (const std::string p : {"fp16", "bf16", "fp8", "fp32"}) {
    const auto r = train("--precision " + p);
    ASSERT_EQ(r.status, 0) << p << ": " << r.err;
    at[p] = nlohmann::json::parse(r.out);
    EXPECT_EQ(at[p]["precision"], p);
  }
  EXPECT_THAT(at["bf16"]["precision_runs_as"].get<std::string>(), HasSubstr("--bf16"));
  const auto memory = [&](const std::string& p, const char* part) {
    return at[p]["stages"][0]["memory_bytes"][part].get<double>();
  };
  EXPECT_DOUBLE_EQ(memory("bf16", "gradients"), 2 * memory("fp16", "gradients"));
  EXPECT_DOUBLE_EQ(memory("bf16", "weights"), memory("fp16", "weights"));
  EXPECT_DOUBLE_EQ(memory("bf16", "weights") + memory("bf16", "gradients") +
                       memory("bf16", "optimizer"),
                   18.0 / 20 * (memory("fp16", "weights") + memory("fp16", "gradients") +
                                memory("fp16", "optimizer")));
  EXPECT_DOUBLE_EQ(memory("fp32", "activations"), 2 * memory("bf16", "activations"));
  EXPECT_GT(at["bf16"]["dp_comm_s"].get<double>(), 1.5 * at["fp16"]["dp_comm_s"].get<double>());
  const auto forward = [&](const std::string& p) {
    return at[p]["stages"][0]["forward_s"].get<double>();
  };
  EXPECT_LT(forward("fp8"), 0.8 * forward("bf16"));
  EXPECT_GT(forward("fp32"), 5 * forward("bf16"));
  EXPECT_GT(at["fp8"]["stages"][0]["weight_cast_s"].get<double>(), 0);
  EXPECT_EQ(at["bf16"]["stages"][0]["weight_cast_s"].get<double>(), 0);

  const auto amp = train("--precision amp");
  EXPECT_EQ(amp.status, 2);
  EXPECT_EQ(amp.out, "");
  EXPECT_THAT(amp.err, HasSubstr("framework megatron-lm cannot train at precision amp"));
  EXPECT_EQ(amp.err.find('\n'), amp.err.size() - 1);
  const auto a100 = run_command(kGpuscale + " train --topology dgx-a100-superpod --workload "
                                "mcore-gpt-1.7b --tp 1 --pp 1 --dp 8 --global-batch 8 --precision fp8");
  EXPECT_EQ(a100.status, 2);
  EXPECT_THAT(a100.err, HasSubstr("no fp8"));
  EXPECT_EQ(a100.err.find('\n'), a100.err.size() - 1);
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
