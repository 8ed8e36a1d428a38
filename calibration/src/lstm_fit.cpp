#include "calibration/src/lstm_fit.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "calibration/src/analytic_fit.hpp"
#include "sim/compute/layer_kernels.hpp"

namespace gpuscale::calib {
namespace {

using compute::Precision;
using compute::TrainingPass;

// Sum of |log(model / measured)| over the fitting half's forward and backward-data calls.
double log_error(const std::vector<LstmCall>& calls, const compute::GpuSpec& gpu,
                 const compute::AnalyticParams& params, Precision precision) {
  double sum = 0;
  for (const LstmCall& c : calls) {
    if (c.held_out || c.pass == TrainingPass::backward_weights) continue;
    sum += std::abs(std::log(lstm_model_time(gpu, params, c, precision).value / c.measured.value));
  }
  return sum;
}

// The efficiency of `precision` minimising log_error, set in `params`; returns the minimum.
double fit_efficiency(const std::vector<LstmCall>& calls, const compute::GpuSpec& gpu,
                      compute::AnalyticParams& params, Precision precision) {
  double& efficiency = params.recurrent_memory_efficiency[static_cast<int>(precision)];
  auto at = [&](double x) {
    efficiency = x;
    return log_error(calls, gpu, params, precision);
  };
  constexpr double kLow = 0.05, kHigh = 2.0, kStep = 0.05;
  double best = kLow, best_value = std::numeric_limits<double>::infinity();
  for (int i = 0; kLow + i * kStep <= kHigh + 1e-9; ++i) {
    const double x = kLow + i * kStep, v = at(x);
    if (v < best_value) {
      best = x;
      best_value = v;
    }
  }
  // Golden-section search (Kiefer 1953) on [best - step, best + step], fixed iterations.
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  double a = std::max(kLow, best - kStep), b = std::min(kHigh, best + kStep);
  for (int i = 0; i < 40; ++i) {
    const double c = b - ratio * (b - a), d = a + ratio * (b - a);
    if (at(c) < at(d)) {
      b = d;
    } else {
      a = c;
    }
  }
  const double v = at((a + b) / 2);
  if (v > best_value) at(best);
  return std::min(v, best_value);
}

}  // namespace

bool held_out(const DeepBenchLstm& r) {
  return held_out_shape(fmt::format("lstm {} {} {}", r.hidden, r.n, r.timesteps));
}

std::vector<LstmCall> lstm_calls(const DeepBenchResults& results) {
  std::vector<LstmCall> calls;
  for (const DeepBenchLstm& r : results.lstms) {
    const bool held = held_out(r);
    const auto h = static_cast<double>(r.hidden), n = static_cast<double>(r.n),
               t = static_cast<double>(r.timesteps);
    calls.push_back({r.line, h, n, t, TrainingPass::forward, r.forward, held});
    calls.push_back({r.line, h, n, t, TrainingPass::backward_data, r.backward_data, held});
    calls.push_back({r.line, h, n, t, TrainingPass::backward_weights, r.backward_weights, held});
  }
  return calls;
}

Seconds lstm_model_time(const compute::GpuSpec& gpu, const compute::AnalyticParams& params,
                        const LstmCall& call, Precision precision) {
  const compute::PassKernels kernels =
      compute::lstm_recurrent_kernels(call.batch, call.hidden, call.steps, call.pass, precision);
  double total = 0;
  for (const compute::KernelWork& k : kernels.work) {
    total += compute::analytic_kernel_time(gpu, params, k, precision).value;
  }
  return {total};
}

ErrorStats lstm_errors(const std::vector<LstmCall>& calls, const compute::GpuSpec& gpu,
                       const compute::AnalyticParams& params, Precision precision, bool held,
                       std::optional<TrainingPass> pass) {
  std::vector<double> errors;
  for (const LstmCall& c : calls) {
    if (c.held_out != held || (pass && c.pass != *pass)) continue;
    const double model = lstm_model_time(gpu, params, c, precision).value;
    errors.push_back((model - c.measured.value) / c.measured.value);
  }
  return error_stats(errors);
}

compute::AnalyticParams fit_recurrent(const std::vector<LstmCall>& fp32,
                                      const std::vector<LstmCall>& mixed,
                                      const compute::GpuSpec& gpu, compute::AnalyticParams start) {
  compute::AnalyticParams best = start;
  double best_value = std::numeric_limits<double>::infinity();
  for (double slab : kSlabRows) {
    compute::AnalyticParams trial = start;
    trial.recurrent_slab_rows = slab;
    const double value = fit_efficiency(fp32, gpu, trial, Precision::fp32) +
                         fit_efficiency(mixed, gpu, trial, Precision::tensor);
    if (value < best_value) {
      best = trial;
      best_value = value;
    }
  }
  auto& e = best.recurrent_memory_efficiency;
  e[static_cast<int>(Precision::fp16)] = e[static_cast<int>(Precision::fp32)];
  for (Precision p : {Precision::tf32, Precision::bf16, Precision::fp8}) {
    e[static_cast<int>(p)] = e[static_cast<int>(Precision::tensor)];
  }
  return best;
}

}  // namespace gpuscale::calib
