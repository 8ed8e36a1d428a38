#include "calibration/src/lstm_fit.hpp"

#include <fmt/format.h>

#include "calibration/src/analytic_fit.hpp"
#include "sim/compute/layer_kernels.hpp"

namespace gpuscale::calib {

using compute::Precision;
using compute::TrainingPass;

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

}  // namespace gpuscale::calib
