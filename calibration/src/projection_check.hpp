// The check of the cross-GPU projection against measurements (docs/calibration.md#checking-the-
// projection): DeepBench's shapes timed on one GPU (deepbench_measurements.hpp) are projected to
// the GPU DeepBench itself ran on (projection.hpp) and compared, row by row, with DeepBench's
// times there: relative error (projected - DeepBench) / DeepBench, summarised per operation.
#pragma once

#include <string>
#include <vector>

#include "calibration/src/deepbench.hpp"
#include "calibration/src/deepbench_measurements.hpp"
#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"

namespace gpuscale::calib {

// One library call: a GEMM, or one pass of a convolution.
struct ProjectedCall {
  int line = 0;                 // of the DeepBench CSV
  compute::KernelClass kind = compute::KernelClass::gemm;
  Seconds measured;             // on the measuring GPU
  Seconds projected;            // to DeepBench's GPU
  Seconds reference;            // DeepBench's time there

  double error() const { return (projected.value - reference.value) / reference.value; }
};

struct ErrorSummary {
  std::string operation;  // "gemm", "conv forward", "conv backward_data", "conv backward_weights"
  int n = 0;
  double median_abs = 0;     // of |error|
  double p90_abs = 0;        // of |error|, linear between ranks
  double median_signed = 0;  // > 0: the projection is slow
};

struct ProjectionCheck {
  std::vector<ProjectedCall> calls;
  // Measured rows whose line holds no DeepBench row of the same kind and shape.
  std::vector<int> unmatched_lines;
  int unmeasured_rows = 0;  // DeepBench rows the measurements lack
  // gemm, then each convolution pass; operations without calls are left out.
  std::vector<ErrorSummary> summary;
};

// Projects every measured call from `measured_on` to `reference_gpu`: the launch overhead on the
// measuring GPU is the file's microbenchmark where it has one, else `params`'; on the reference
// GPU it is `params`' (the V100 constants come from DeepBench). Throws ConfigError when the
// measurements and `reference` are of different precisions.
ProjectionCheck check_projection(const DeepBenchMeasurements& measured,
                                 const DeepBenchResults& reference,
                                 const compute::GpuSpec& measured_on,
                                 const compute::GpuSpec& reference_gpu,
                                 const compute::AnalyticParams& params);

// The analytic model (kernel_time.hpp, constants from DeepBench on the V100) on the measuring
// GPU's spec against what was measured there: in each call, `projected` is the analytic time
// and `reference` the measured one. Out of sample for any GPU but the V100.
ProjectionCheck check_analytic(const DeepBenchMeasurements& measured,
                               const compute::GpuSpec& measured_on,
                               const compute::AnalyticParams& params);

// `summary` as a table for people, one operation per line.
std::string format_error_summary(const std::vector<ErrorSummary>& summary);

}  // namespace gpuscale::calib
