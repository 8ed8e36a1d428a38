// The analytic model against DeepBench's V100 LSTM rows (calibration/src/deepbench.hpp): each
// row's three passes as calls, timed as DeepBench ran them (one direction, no input projection:
// compute::lstm_recurrent_kernels), and the model's error on them
// (docs/compute-model.md#recurrent-layers).
//
// A row is on the fitting or the held-out half by its shape alone ("lstm H N T"), before any
// fit, by the hash analytic_fit.hpp uses; both files hold the same shapes, so a shape is on the
// same side in both.
#pragma once

#include <optional>
#include <vector>

#include "calibration/src/deepbench.hpp"
#include "calibration/src/error_stats.hpp"
#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"

namespace gpuscale::calib {

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

}  // namespace gpuscale::calib
