#include "calibration/tool/timing.hpp"

#include <utility>
#include <vector>

#include "calibration/tool/cuda_status.hpp"

namespace gpuscale::calib {

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
  return summarize(std::move(seconds));
}

}  // namespace gpuscale::calib
