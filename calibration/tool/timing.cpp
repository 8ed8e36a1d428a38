#include "calibration/tool/timing.hpp"

#include <algorithm>
#include <vector>

#include "calibration/tool/cuda_status.hpp"

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

Timing time_on_stream(GpuContext& ctx, const std::function<void()>& enqueue,
                      const TimingMethod& method) {
  for (int i = 0; i < method.warmup; ++i) enqueue();
  std::vector<cudaEvent_t> events(2 * static_cast<std::size_t>(method.runs));
  for (auto& e : events) GS_CUDA(cudaEventCreate(&e));
  for (int i = 0; i < method.runs; ++i) {
    GS_CUDA(cudaEventRecord(events[2 * i], ctx.stream()));
    enqueue();
    GS_CUDA(cudaEventRecord(events[2 * i + 1], ctx.stream()));
  }
  ctx.synchronize();
  std::vector<double> seconds;
  for (int i = 0; i < method.runs; ++i) {
    float ms = 0;
    GS_CUDA(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
    seconds.push_back(ms * 1e-3);
  }
  for (auto& e : events) cudaEventDestroy(e);
  std::sort(seconds.begin(), seconds.end());
  return {quantile(seconds, 0.5), quantile(seconds, 0.75) - quantile(seconds, 0.25)};
}

}  // namespace gpuscale::calib
