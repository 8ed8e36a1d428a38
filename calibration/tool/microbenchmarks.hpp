// The machine's fixed costs and bandwidths that a profile carries with it
// (docs/calibration.md#microbenchmarks): what a kernel launch costs, how fast device memory,
// host-device copies and, between GPUs of one machine, peer copies move data; and what the host
// pays, on its own clock, to launch, record events, issue copies and wait for the GPU.
#pragma once

#include "calibration/tool/gpu_context.hpp"
#include "calibration/tool/timing.hpp"
#include "sim/compute/measurement.hpp"

namespace gpuscale::calib {

compute::Microbenchmarks run_microbenchmarks(GpuContext& ctx, const TimingMethod& timing);

}  // namespace gpuscale::calib
