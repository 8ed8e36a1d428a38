// The analytic model against DeepBench's V100 LSTM rows (calibration/src/deepbench.hpp): each
// row's three passes as calls, timed as DeepBench ran them (one direction, no input projection:
// compute::lstm_recurrent_kernels), and the model's error on them
// (docs/compute-model.md#recurrent-layers).
//
// A row is on the fitting or the held-out half by its shape alone ("lstm H N T"), before any
// fit, by the hash analytic_fit.hpp uses; both files hold the same shapes, so a shape is on the
// same side in both.
//
//   recurrent slab_rows          one of kSlabRows, the one whose fit (below) leaves the smallest
//                                sum over both precisions
//   recurrent memory_efficiency  per precision, the value in [0.05, 2] that minimises the sum of
//                                |log(model / measured)| over the fitting half's forward and
//                                backward-data calls (the passes of the per-step GEMMs): a scan
//                                in steps of 0.05, then a golden-section search around the best
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "calibration/src/deepbench.hpp"
#include "calibration/src/error_stats.hpp"
#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"

namespace gpuscale::calib {

// The slab widths tried: the tile widths of cuBLAS's Volta SGEMM and HGEMM kernels
// (volta_sgemm_128x32, _64x64, _128x64, _128x128; volta_h884gemm_256x128 and the like) [?].
inline constexpr std::array<double, 4> kSlabRows{32, 64, 128, 256};

bool held_out(const DeepBenchLstm& row);

// One timed pass of one DeepBench LSTM row.
struct LstmCall {
  int line = 0;
  double hidden = 0, batch = 0, steps = 0;
  compute::TrainingPass pass = compute::TrainingPass::forward;
  Seconds measured;
  bool held_out = false;
};

// Every pass of every LSTM row.
std::vector<LstmCall> lstm_calls(const DeepBenchResults& results);

// The model's time of `call`: the sum of its kernels' analytic times.
Seconds lstm_model_time(const compute::GpuSpec& gpu, const compute::AnalyticParams& params,
                        const LstmCall& call, compute::Precision precision);

// (model - measured) / measured over `calls` whose held_out is `held`, optionally one pass.
ErrorStats lstm_errors(const std::vector<LstmCall>& calls, const compute::GpuSpec& gpu,
                       const compute::AnalyticParams& params, compute::Precision precision,
                       bool held, std::optional<compute::TrainingPass> pass = std::nullopt);

// `start` with its recurrent constants fitted (the header's list), every other constant kept:
// fp32 from `fp32`, tensor from `mixed`; fp16 (no DeepBench run) takes fp32's efficiency, and
// tf32, bf16 and fp8 tensor's, as the loader gives a precision the file omits.
compute::AnalyticParams fit_recurrent(const std::vector<LstmCall>& fp32,
                                      const std::vector<LstmCall>& mixed,
                                      const compute::GpuSpec& gpu, compute::AnalyticParams start);

}  // namespace gpuscale::calib
