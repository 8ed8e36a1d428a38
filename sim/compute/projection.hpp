// Carrying a time measured on one GPU (X) to another (Y): per pass, the measured time less its
// launch overheads is scaled by the ratio of the two GPUs' rooflines for the pass's work, and
// Y's launch overheads are added back (docs/compute-model.md#projection-to-another-gpu):
//
//   roof_G(w)   = max(flops / peak_G[p], bytes / copy_bandwidth_G)        one kernel, precision p
//   t_Y         = n L_Y + max(0, t_X - n L_X) x Σ roof_Y(w_i) / Σ roof_X(w_i)
//
// over the n kernels w_i of the pass (layer_kernels.hpp). Compute-bound on both GPUs, the ratio
// is the peak ratio; memory-bound on both, the copy-bandwidth ratio; across the ridge, the
// roofline decides. With several kernels the sum is the measured body split among them in
// proportion to their roofline times on X, each part scaled by its own ratio. What the roofline
// leaves out (achieved fractions of peak, algorithm choice) is assumed the same on both GPUs.
// A pass measured as 0 ran no kernel and stays 0.
#pragma once

#include <span>

#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::compute {

// One end of a projection: the GPU and the fixed cost of one kernel on it.
struct ProjectionEnd {
  GpuSpec gpu;
  Seconds launch_overhead;
};

// The ideal time of `work` on `gpu`: max(flops / peak[precision], bytes / copy bandwidth).
// Throws ConfigError when the GPU lacks the precision (tensor on a P100).
Seconds roofline_time(const GpuSpec& gpu, const KernelWork& work, Precision precision);

// A pass of `kernels` at `precision` that took `measured` on `from`, as it would on `to`.
// Throws std::invalid_argument for a negative time.
Seconds project_time(Seconds measured, std::span<const KernelWork> kernels, Precision precision,
                     const ProjectionEnd& from, const ProjectionEnd& to);

}  // namespace gpuscale::compute
