// `gpuscale-calibrate` as a user runs it, on a machine with or without a GPU: it is built (the
// CUDA Toolkit and cuDNN were found), prints its help, and rejects bad input with one line and
// exit status 2 before it touches a GPU. Timing needs a GPU and is not tested here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

using ::testing::HasSubstr;
using testing::run_command;

const std::string kCalibrate = GPUSCALE_CALIBRATE_EXECUTABLE;

TEST(CalibrateCli, HelpNamesTheModesAndTheOutput) {
  const auto r = run_command(kCalibrate + " --help");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("--workload"));
  EXPECT_THAT(r.out, HasSubstr("--shapes"));
  EXPECT_THAT(r.out, HasSubstr("--output"));
}

void expect_one_line_error(const std::string& args, const std::string& message) {
  const auto r = run_command(kCalibrate + " " + args);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(message));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CalibrateCli, BadInputIsOneLineAndExitStatus2) {
  const std::string out = " -o " GPUSCALE_TEST_TMPDIR "/never-written.yaml";
  expect_one_line_error("--workload lenet --precision fp64" + out,
                        "--precision: 'fp64' is not a precision");
  expect_one_line_error("--workload no-such-net" + out, "no-such-net");
  expect_one_line_error("--workload lenet --workspace 'lots'" + out, "--workspace");
  expect_one_line_error("--workload lenet --batch 16,abc" + out,
                        "--batch: 'abc' is not a batch size");
  expect_one_line_error("--workload lenet", "--output is required");
  expect_one_line_error("-o x.yaml", "give --workload MODEL or --shapes deepbench");
  expect_one_line_error("--workload lenet --shapes deepbench" + out, "excludes");
}

}  // namespace
}  // namespace gpuscale
