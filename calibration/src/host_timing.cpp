#include "calibration/src/host_timing.hpp"

#include <chrono>
#include <utility>

#include "calibration/src/error_stats.hpp"

namespace gpuscale::calib {

Timing summarize(std::vector<double> seconds) {
  return {quantile(seconds, 0.5), quantile(seconds, 0.75) - quantile(seconds, 0.25)};
}

Timing time_on_host(int calls, const std::function<void()>& run, const TimingMethod& method,
                    const std::function<void()>& settle) {
  for (int i = 0; i < method.warmup; ++i) {
    run();
    settle();
  }
  std::vector<double> seconds;
  for (int i = 0; i < method.runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    settle();
    seconds.push_back(elapsed.count() / calls);
  }
  return summarize(std::move(seconds));
}

}  // namespace gpuscale::calib
