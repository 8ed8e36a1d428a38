#include "sim/compute/projection.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpuscale::compute {

Seconds roofline_time(const GpuSpec& gpu, const KernelWork& work, Precision layer_precision) {
  const Precision precision = work.precision.value_or(layer_precision);
  return {std::max(work.flops / gpu.peak(precision).value,
                   work.bytes / gpu.copy_bandwidth().value)};
}

Seconds project_time(Seconds measured, std::span<const KernelWork> kernels, Precision precision,
                     const ProjectionEnd& from, const ProjectionEnd& to) {
  if (measured.value < 0) throw std::invalid_argument("projection of a negative time");
  if (measured.value == 0) return {0};
  double roof_from = 0, roof_to = 0;
  for (const KernelWork& k : kernels) {
    roof_from += roofline_time(from.gpu, k, precision).value;
    roof_to += roofline_time(to.gpu, k, precision).value;
  }
  const double launches = static_cast<double>(kernels.size());
  const double body = std::max(0.0, measured.value - launches * from.launch_overhead.value);
  // Work the roofline cannot see (no FLOPs, no bytes) has nothing to scale by: kept as measured.
  const double ratio = roof_from > 0 ? roof_to / roof_from : 1.0;
  return {launches * to.launch_overhead.value + body * ratio};
}

}  // namespace gpuscale::compute
