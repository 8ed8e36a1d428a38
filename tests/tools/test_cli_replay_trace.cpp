// `gpuscale replay-trace` end to end: the JSON's times, an ASTRA-sim workload exported as a
// Chakra trace and replayed from it to the same iteration, and bad input as one line, exit 2.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

using testing::run_command;
using nlohmann::json;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;
const std::string kResnet =
    std::string(GPUSCALE_SOURCE_DIR) + "/tests/interop/data/resnet50-like.txt";

TEST(CliReplayTrace, ExportedChakraTraceReplaysToTheSameIteration) {
  const std::string marker = testing::write_temp_file("cli-export.marker", "");
  const std::string prefix = marker.substr(0, marker.size() - 7);
  const auto astra = run_command(kGpuscale + " replay-trace --astra-sim " + kResnet +
                                 " --topology dgx-h200 --gpus 8 --format json --export-chakra " +
                                 prefix);
  ASSERT_EQ(astra.status, 0) << astra.err;
  const auto chakra = run_command(kGpuscale + " replay-trace --chakra " + prefix +
                                  " --topology dgx-h200 --gpus 8 --format json");
  ASSERT_EQ(chakra.status, 0) << chakra.err;
  const json a = json::parse(astra.out), c = json::parse(chakra.out);
  EXPECT_EQ(a["format"], "astra-sim");
  EXPECT_EQ(c["format"], "chakra");
  EXPECT_EQ(a["iteration_s"], c["iteration_s"]);
  EXPECT_EQ(a["exposed_communication_s"], c["exposed_communication_s"]);
  EXPECT_GT(a["iteration_s"].get<double>(), a["compute_s"].get<double>());
}

TEST(CliReplayTrace, TableNamesTheInputAndTheMachine) {
  const auto r = run_command(kGpuscale + " replay-trace --astra-sim " + kResnet +
                             " --topology dgx-h200 --gpus 8");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(ASTRA-sim DATA workload, 54 layers) on dgx-h200 (8 x H200-SXM)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("exposed communication"), std::string::npos);
}

TEST(CliReplayTrace, BadInputIsOneLineAndExitTwo) {
  const auto none = run_command(kGpuscale + " replay-trace --topology dgx-h200");
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(none.err, "--astra-sim: give one of --astra-sim FILE and --chakra PREFIX\n");
  EXPECT_TRUE(none.out.empty());
  const auto missing = run_command(kGpuscale + " replay-trace --chakra /no/such/trace");
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err, "/no/such/trace.0.et: cannot read rank 0's Chakra trace (give --chakra "
                         "the prefix of PREFIX.0.et, PREFIX.1.et, ...)\n");
}

}  // namespace
}  // namespace gpuscale
