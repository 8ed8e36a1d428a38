// The calibration tool's timing that needs no GPU, so that it is tested on every machine: how runs
// are repeated, how they are summarised (median, interquartile range), and timing calls on the
// host's clock, for costs the host pays (launching, synchronising) that CUDA events cannot see.
#pragma once

#include <functional>
#include <vector>

namespace gpuscale::calib {

struct TimingMethod {
  int warmup = 3;
  int runs = 20;
};

struct Timing {
  double median = 0;  // seconds
  double spread = 0;  // seconds: 75th minus 25th percentile
};

// The median and interquartile range of `seconds` (at least one), interpolating between order
// statistics.
Timing summarize(std::vector<double> seconds);

// Host wall time per call, on std::chrono::steady_clock: `run` makes `calls` calls; `method.warmup`
// untimed runs, then `method.runs` timed ones. `settle` runs untimed after every run, so that
// what it waits for (the GPU finishing the work `run` issued) is not counted.
Timing time_on_host(int calls, const std::function<void()>& run, const TimingMethod& method,
                    const std::function<void()>& settle = [] {});

}  // namespace gpuscale::calib
