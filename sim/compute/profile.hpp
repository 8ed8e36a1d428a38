// Measured per-layer compute times: the first implementation of the compute-time model, fed by
// the calibration tool's files (format: docs/compute-model.md#measured-profiles).
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

#include <map>
#include <string>
#include <vector>

#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace gpuscale::compute {

struct PassTimes {
  Seconds forward;
  Seconds backward_data;     // 0 for a layer whose input needs no gradient (the first)
  Seconds backward_weights;  // 0 for a layer without weights

  Seconds of(TrainingPass pass) const;
};

struct LayerProfile {
  std::string name;
  Origin origin;
  std::map<long, PassTimes> by_batch;  // batch size -> times; never empty
};

struct MeasuredProfile {
  Origin origin;            // the file
  std::string gpu;          // GPU model, as topology files write it ("V100-SXM2")
  std::string driver;       // NVIDIA driver version
  std::string cuda;         // CUDA version
  std::string cudnn;        // cuDNN version
  std::string framework;    // e.g. "MXNet 1.2.0 (NGC 18.04)"
  Precision precision = Precision::fp32;
  std::string workload;     // the workload file's name ("resnet50")
  std::string source;       // who measured, where, how (optional in the file)
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

}  // namespace gpuscale::compute
