// Measured per-layer compute times: the first implementation of the compute-time model, fed by
// the calibration tool's files (format: docs/calibration.md#measured-profiles).
//
// A profile holds, per layer and per measured batch size, the GPU time of the layer's forward,
// backward-data and backward-weights passes. A batch size not measured is estimated:
//   between two measured batches b0 < b < b1: linear interpolation,
//       t(b) = t(b0) + (t(b1) - t(b0)) (b - b0) / (b1 - b0)
//     (kernel time is close to affine in the batch, a fixed part plus a per-sample part, once
//     the GPU is busy; between neighbours the affine law holds well);
//   above the largest measured batch B: proportional, t(b) = t(B) b / B
//     (a saturated GPU's time grows with the work; dropping the fixed part errs on the slow
//     side, by at most that part);
//   below the smallest measured batch b_min: t(b_min)
//     (an under-filled GPU's time flattens rather than shrinks: an upper bound, not a guess of
//     how far it drops).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"
#include "sim/compute/measurement.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::compute {

struct PassTimes {
  Seconds forward;
  Seconds backward_data;     // 0 for a layer whose input needs no gradient (the first)
  Seconds backward_weights;  // 0 for a layer without weights

  Seconds of(TrainingPass pass) const;
};

// One layer at one batch size: the median time of each pass and, when the calibration tool
// wrote the file, how widely the runs spread and which algorithm the library chose.
struct BatchMeasurement {
  PassTimes time;                   // medians
  std::optional<PassTimes> spread;  // interquartile range of the runs; absent when not recorded
  // cuDNN's or cuBLAS's choice per pass (TrainingPass order), "" when none or not recorded.
  std::array<std::string, kTrainingPassCount> algorithm;
};

struct LayerProfile {
  std::string name;
  Origin origin;
  std::map<long, BatchMeasurement> by_batch;  // batch size -> measurement; never empty

  // One pass at `batch` (>= 1), estimated as above when not measured.
  Seconds time(TrainingPass pass, long batch) const;
};

struct MeasuredProfile {
  Origin origin;                // the file
  MeasurementHeader header;     // GPU, versions, method, microbenchmarks
  Precision precision = Precision::fp32;
  std::string workload;         // the workload file's name ("resnet-50")
  Origin workload_origin;       // its `workload:` line
  Origin layers_origin;         // the `layers:` line
  std::vector<long> out_of_memory_batches;  // batch sizes tried that did not fit in the GPU
  std::vector<LayerProfile> layers;  // file order

  // nullptr when the profile has no such layer.
  const LayerProfile* find(const std::string& layer) const;
  // One pass of one layer at `batch` (>= 1), estimated as above when not measured. Throws
  // ConfigError naming the file for an unknown layer.
  Seconds time(const std::string& layer, TrainingPass pass, long batch) const;
};

// Strict: unknown keys, missing fields, times without units, batch sizes that are not whole
// numbers >= 1 are ConfigErrors with FILE:LINE.
MeasuredProfile load_profile(const std::string& path);

// The file load_profile reads back to an equal MeasuredProfile (times in microseconds with
// nanosecond resolution); what gpuscale-calibrate writes.
std::string profile_to_yaml(const MeasuredProfile& profile);

}  // namespace gpuscale::compute
