// DeepBench's GEMM and convolution shapes timed on another GPU by `gpuscale-calibrate --shapes
// deepbench`, so that a projection to the V100 can be compared with DeepBench's V100 times row by
// row (docs/calibration.md#deepbench-shapes). Rows carry the line of the DeepBench CSV they came
// from; the shapes are repeated so a file reads on its own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibration/src/deepbench.hpp"
#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/measurement.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::calib {

struct TimedCall {
  Seconds median;
  Seconds spread;         // interquartile range of the runs
  std::string algorithm;  // cuDNN's choice ("WINOGRAD_NONFUSED"), cuBLAS's ("default"), or ""
};

struct MeasuredGemm {
  // `time` is DeepBench's V100 time, unused here: zero when read back, as is `application`.
  DeepBenchGemm shape;
  TimedCall time;
};

struct MeasuredConv {
  // Its times are DeepBench's V100 times, unused here: zero when read back, as are
  // `application` and `forward_algorithm`; the reader computes `p` and `q` from the shape.
  DeepBenchConv shape;
  TimedCall forward;
  std::optional<TimedCall> backward_data;  // absent where DeepBench has none (input layers)
  TimedCall backward_weights;
};

struct DeepBenchMeasurements {
  Origin origin;
  compute::MeasurementHeader header;
  compute::Precision precision = compute::Precision::fp32;  // fp32 or tensor
  std::string shapes_file;  // the DeepBench CSV the shapes were read from ("results_fp32.csv")
  std::vector<MeasuredGemm> gemms;
  std::vector<MeasuredConv> convs;
};

std::string deepbench_measurements_to_yaml(const DeepBenchMeasurements& m);
// Strict, as every gpuscale file: FILE:LINE errors for unknown keys, missing fields, bare numbers.
DeepBenchMeasurements load_deepbench_measurements(const std::string& path);

}  // namespace gpuscale::calib
