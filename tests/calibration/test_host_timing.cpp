// The calibration tool's timing that needs no GPU (calibration/src/host_timing.hpp): the summary
// every measurement reports, and host wall-clock timing of the host-side microbenchmarks.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "calibration/src/host_timing.hpp"

namespace gpuscale::calib {
namespace {

TEST(HostTiming, SummaryIsTheMedianAndTheInterquartileRange) {
  const Timing odd = summarize({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(odd.median, 3);
  EXPECT_DOUBLE_EQ(odd.spread, 4 - 2);
  // Between order statistics, linearly: quartiles at 1.75 and 3.25.
  const Timing even = summarize({4, 3, 2, 1});
  EXPECT_DOUBLE_EQ(even.median, 2.5);
  EXPECT_DOUBLE_EQ(even.spread, 1.5);
  const Timing one = summarize({7});
  EXPECT_DOUBLE_EQ(one.median, 7);
  EXPECT_DOUBLE_EQ(one.spread, 0);
}

// Sleeps are long enough to dwarf the clock's resolution, and bounded only from below where a
// busy machine could stretch them.
TEST(HostTiming, TimesPerCallAndLeavesTheSettlingOut) {
  using std::chrono::milliseconds;
  int runs = 0, settles = 0;
  const Timing t = time_on_host(
      4,
      [&] {
        ++runs;
        std::this_thread::sleep_for(milliseconds(2));
      },
      {1, 5},
      [&] {
        ++settles;
        std::this_thread::sleep_for(milliseconds(40));
      });
  EXPECT_EQ(runs, 6);  // one warm-up, five timed
  EXPECT_EQ(settles, 6);
  EXPECT_GE(t.median, 0.5e-3);  // 2 ms over 4 calls
  EXPECT_LT(t.median, 10e-3);   // with the 40 ms settle counted it would be over 10.5 ms
  EXPECT_GE(t.spread, 0);
}

}  // namespace
}  // namespace gpuscale::calib
