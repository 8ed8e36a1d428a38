// `gpuscale workload list|show` as a user runs them: the JSON contract of the issue (ResNet-50:
// 25.6M parameters, 4.1 GMAC forward per image), byte-identical output for the same input, the
// table, and bad input (one line on stderr, exit status 2, nothing on stdout).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::run_command;
using testing::write_temp_file;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

TEST(CliWorkload, ListNamesEveryShippedModel) {
  const auto r = run_command(kGpuscale + " workload list");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* name : {"lenet", "lenet-5", "alexnet", "googlenet", "inception-v3", "resnet-50",
                           "resnet-101", "resnet-152", "vgg-16", "edsr"}) {
    EXPECT_THAT(r.out, HasSubstr(name));
  }
}

TEST(CliWorkload, ResNet50JsonHasTheIssuesFields) {
  const auto r = run_command(kGpuscale + " workload show resnet-50 --batch 32 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "resnet-50");
  EXPECT_NEAR(j["params"].get<double>() / 25.6e6, 1.0, 0.01);
  EXPECT_NEAR(j["fwd_macs_per_sample"].get<double>() / 4.1e9, 1.0, 0.01);
  EXPECT_NEAR(j["fwd_flops_per_sample"].get<double>() / 8.2e9, 1.0, 0.02);
  ASSERT_FALSE(j["layers"].empty());
  const auto& conv1 = j["layers"][0];
  for (const char* key : {"name", "type", "output_shape", "params", "fwd_flops", "bwd_data_flops",
                          "bwd_weight_flops", "activation_bytes"}) {
    EXPECT_TRUE(conv1.contains(key)) << key;
  }
  EXPECT_EQ(conv1["output_shape"], "64x112x112");
  // Bytes are at the given batch: conv1 keeps its 64x112x112 fp32 output per sample.
  EXPECT_DOUBLE_EQ(conv1["activation_bytes"].get<double>(), 32.0 * 64 * 112 * 112 * 4);
  const auto& memory = j["memory_bytes"];
  for (const char* key : {"context", "weights", "gradients", "optimizer", "activations",
                          "workspace", "exchange", "total"}) {
    EXPECT_TRUE(memory["gpu0"].contains(key)) << key;
  }
  EXPECT_GT(memory["largest_batch"].get<int>(), 32);
}

TEST(CliWorkload, SameInputSameBytes) {
  const std::string command = kGpuscale + " workload show inception-v3 --gpus 8 --format json";
  EXPECT_EQ(run_command(command).out, run_command(command).out);
}

TEST(CliWorkload, TableShowsGpu0AndTheOthersForP2p) {
  const auto r = run_command(kGpuscale + " workload show lenet --batch 16 --gpus 8");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fc1"));
  EXPECT_THAT(r.out, HasSubstr("gpu0"));
  EXPECT_THAT(r.out, HasSubstr("max other"));
  EXPECT_THAT(r.out, HasSubstr("largest batch per GPU"));
}

TEST(CliWorkload, ArgumentOverridesChangeTheModel) {
  const auto r = run_command(kGpuscale + " workload show edsr --set args.doublings=1 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["params"], 40729603);
}

TEST(CliWorkload, BadInputIsOneLineAndExitTwo) {
  const std::string bad = write_temp_file(
      "cli-bad-model.yaml",
      "name: t\ndataset: synthetic\ninput: {channels: 3, height: 8, width: 8}\n"
      "layers:\n  - conv: {filters: 4, kernel: 9}\n");
  for (const std::string& args :
       {"workload show " + bad, std::string("workload show resnet50"),
        std::string("workload show resnet-50 --gpu-memory 16"),
        std::string("workload show resnet-50 --batch 0")}) {
    const auto r = run_command(kGpuscale + " " + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_THAT(run_command(kGpuscale + " workload show " + bad).err, StartsWith(bad + ":5: "));
}

}  // namespace
}  // namespace gpuscale
