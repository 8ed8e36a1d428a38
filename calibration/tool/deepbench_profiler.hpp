// `--shapes deepbench`: the GEMM and convolution shapes of a DeepBench results file timed on this
// GPU with the same libraries' calls, so a projection to the V100 can be checked row by row
// against DeepBench's V100 times (docs/calibration.md#deepbench-shapes).
#pragma once

#include <cstddef>
#include <string>

#include "calibration/src/deepbench_measurements.hpp"
#include "calibration/tool/gpu_context.hpp"
#include "calibration/tool/timing.hpp"

namespace gpuscale::calib {

// Times every row of `csv_path` (read_deepbench_csv) at the context's precision. Fills the rows
// and `shapes_file`; the caller fills the header.
DeepBenchMeasurements profile_deepbench_shapes(GpuContext& ctx, const std::string& csv_path,
                                               const TimingMethod& timing,
                                               std::size_t workspace_bytes);

}  // namespace gpuscale::calib
