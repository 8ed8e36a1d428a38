// Timing enqueued GPU work the way the profile reports it: untimed warm-up runs, then each timed
// run between two CUDA events on the stream, all enqueued back to back so the GPU never waits
// for the host; the median of the runs and their interquartile range.
#pragma once

#include <functional>

#include "calibration/src/host_timing.hpp"
#include "calibration/tool/gpu_context.hpp"

namespace gpuscale::calib {

// `enqueue` puts the work on ctx.stream() and returns without synchronizing.
Timing time_on_stream(GpuContext& ctx, const std::function<void()>& enqueue,
                      const TimingMethod& method);

}  // namespace gpuscale::calib
