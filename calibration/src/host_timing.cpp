#include "calibration/src/host_timing.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

namespace gpuscale::calib {
namespace {

// Linear interpolation between order statistics of sorted `v` (0 <= q <= 1).
double quantile(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto below = static_cast<std::size_t>(pos);
  const std::size_t above = std::min(below + 1, v.size() - 1);
  return v[below] + (v[above] - v[below]) * (pos - static_cast<double>(below));
}

}  // namespace

Timing summarize(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
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
