#include "calibration/src/analytic_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "calibration/src/lstm_fit.hpp"

namespace gpuscale::calib {
namespace {

using compute::ConvPrecisionParams;
using compute::Precision;
using compute::TrainingPass;

// DeepBench picked FP32 algorithms with cuDNN's Find, which allocates whatever workspace an
// algorithm needs; its FP16 runs forced implicit GEMM, which the tensor constants alone run.
constexpr compute::ConvAlgorithmPolicy kDeepBenchPolicy{true,
                                                        std::numeric_limits<double>::infinity()};

double model_time(const compute::GpuSpec& gpu, const compute::ConvModelParams& model,
                  Seconds launch, const ConvCall& call, Precision precision) {
  return compute::choose_conv_algorithm(gpu, model, launch, call.shape, call.pass, precision,
                                        kDeepBenchPolicy)
      .time.value;
}

// Minimises f from x0 (Nelder and Mead, Computer Journal 7(4), 1965; standard coefficients:
// reflection 1, expansion 2, contraction 1/2, shrink 1/2) for a fixed number of iterations,
// so that the result is the same on every machine.
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                                std::vector<double> x0, double step, int iterations) {
  const std::size_t n = x0.size();
  std::vector<std::vector<double>> points{x0};
  for (std::size_t i = 0; i < n; ++i) {
    points.push_back(x0);
    points.back()[i] += step;
  }
  std::vector<double> values;
  for (const auto& p : points) values.push_back(f(p));
  auto along = [&](const std::vector<double>& centre, const std::vector<double>& worst, double t) {
    std::vector<double> x(n);
    for (std::size_t j = 0; j < n; ++j) x[j] = centre[j] + t * (worst[j] - centre[j]);
    return x;
  };
  for (int it = 0; it < iterations; ++it) {
    std::vector<std::size_t> order(n + 1);
    for (std::size_t i = 0; i <= n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    std::vector<std::vector<double>> p2;
    std::vector<double> v2;
    for (std::size_t i : order) {
      p2.push_back(points[i]);
      v2.push_back(values[i]);
    }
    points.swap(p2);
    values.swap(v2);
    std::vector<double> centre(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) centre[j] += points[i][j] / static_cast<double>(n);
    }
    const auto reflected = along(centre, points[n], -1);
    const double fr = f(reflected);
    if (fr < values[0]) {
      const auto expanded = along(centre, points[n], -2);
      const double fe = f(expanded);
      points[n] = fe < fr ? expanded : reflected;
      values[n] = std::min(fe, fr);
    } else if (fr < values[n - 1]) {
      points[n] = reflected;
      values[n] = fr;
    } else {
      const auto contracted = along(centre, points[n], 0.5);
      const double fc = f(contracted);
      if (fc < values[n]) {
        points[n] = contracted;
        values[n] = fc;
      } else {
        for (std::size_t i = 1; i <= n; ++i) {
          points[i] = along(points[0], points[i], 0.5);
          values[i] = f(points[i]);
        }
      }
    }
  }
  const auto best = std::min_element(values.begin(), values.end()) - values.begin();
  return points[static_cast<std::size_t>(best)];
}

// The search runs on unbounded coordinates: a fraction in (0, 1) through the logistic function,
// a non-negative value through exp.
double fraction(double x) { return 1 / (1 + std::exp(-x)); }
double logit(double f) { return std::log(f / (1 - f)); }

ConvPrecisionParams params_at(const std::vector<double>& x, ConvPrecisionParams p) {
  for (int i = 0; i < compute::kTrainingPassCount; ++i) p.gemm_efficiency[i] = fraction(x[i]);
  p.gemm_fixed_cost = {std::exp(x[3]) * 1e-6};
  p.epilogue_steps = std::exp(x[4]);
  p.memory_efficiency = fraction(x[5]);
  if (p.winograd_efficiency) {
    p.winograd_efficiency = fraction(x[6]);
    p.winograd_fixed_cost = {std::exp(x[7]) * 1e-6};
    p.winograd_fused_efficiency = fraction(x[8]);
    p.winograd_5x5_efficiency = fraction(x[9]);
  }
  return p;
}

// The Winograd constants (non-fused 3x3 efficiency and fixed cost, fused efficiency, non-fused
// 5x5 efficiency) come together: a precision that runs Winograd runs every variant.
std::vector<double> start_at(double efficiency, double fixed_us, double epilogue, double memory,
                             double winograd, double winograd_fixed_us, bool has_winograd) {
  std::vector<double> x{logit(efficiency),  logit(efficiency),  logit(efficiency),
                        std::log(fixed_us), std::log(epilogue), logit(memory)};
  if (has_winograd) {
    x.push_back(logit(winograd));
    x.push_back(std::log(winograd_fixed_us));
    x.push_back(logit(winograd));
    x.push_back(logit(winograd));
  }
  return x;
}

}  // namespace

bool held_out_shape(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return (h & 1) == 1;
}

bool held_out(const DeepBenchConv& r) {
  return held_out_shape(fmt::format("conv {} {} {} {} {} {} {} {} {} {} {}", r.w, r.h, r.c, r.n,
                                    r.k, r.s, r.r, r.pad_w, r.pad_h, r.stride_w, r.stride_h));
}

bool held_out(const DeepBenchGemm& r) {
  return held_out_shape(
      fmt::format("gemm {} {} {} {} {}", r.m, r.n, r.k, r.a_transposed, r.b_transposed));
}

std::vector<ConvCall> conv_calls(const DeepBenchResults& results) {
  std::vector<ConvCall> calls;
  for (const DeepBenchConv& c : results.convs) {
    const compute::ConvShape shape = conv_shape(c);
    const bool held = held_out(c);
    calls.push_back({c.line, shape, TrainingPass::forward, c.forward, held});
    if (c.backward_data) {
      calls.push_back({c.line, shape, TrainingPass::backward_data, *c.backward_data, held});
    }
    calls.push_back({c.line, shape, TrainingPass::backward_weights, c.backward_weights, held});
  }
  return calls;
}

Seconds smallest_call(const std::vector<const DeepBenchResults*>& files) {
  double smallest = std::numeric_limits<double>::infinity();
  for (const DeepBenchResults* f : files) {
    for (const auto& g : f->gemms) smallest = std::min(smallest, g.time.value);
    for (const ConvCall& c : conv_calls(*f)) smallest = std::min(smallest, c.measured.value);
  }
  return {smallest};
}

double fit_gemm_efficiency(const DeepBenchResults& results, const compute::GpuSpec& gpu,
                              Precision precision, Seconds launch) {
  const double peak = gpu.peak(precision).value, ridge = peak / gpu.copy_bandwidth().value;
  std::vector<double> v;
  for (const DeepBenchGemm& g : results.gemms) {
    const compute::KernelWork w = compute::gemm_kernel_work(g.m, g.n, g.k, precision);
    if (held_out(g) || w.flops / w.bytes < ridge || g.time.value <= launch.value) continue;
    v.push_back(w.flops / ((g.time.value - launch.value) * peak));
  }
  return quantile(v, 0.5);
}

double fit_gemm_memory_efficiency(const DeepBenchResults& results, const compute::GpuSpec& gpu,
                                     Seconds launch) {
  const double copy_bw = gpu.copy_bandwidth().value, ridge = gpu.peak_fp32.value / copy_bw;
  std::vector<double> v;
  for (const DeepBenchGemm& g : results.gemms) {
    const compute::KernelWork w = compute::gemm_kernel_work(g.m, g.n, g.k, Precision::fp32);
    if (held_out(g) || w.flops / w.bytes >= ridge || g.time.value <= launch.value) continue;
    v.push_back(w.bytes / ((g.time.value - launch.value) * copy_bw));
  }
  return quantile(v, 0.5);
}

ConvPrecisionParams fit_conv_precision(const std::vector<ConvCall>& calls,
                                       const compute::GpuSpec& gpu,
                                       const compute::ConvModelParams& model, Precision precision,
                                       Seconds launch, ConvPrecisionParams start) {
  std::vector<const ConvCall*> fitting;
  for (const ConvCall& c : calls) {
    if (!c.held_out) fitting.push_back(&c);
  }
  compute::ConvModelParams trial = model;
  auto objective = [&](const std::vector<double>& x) {
    trial.precision[static_cast<int>(precision)] = params_at(x, start);
    double sum = 0;
    for (const ConvCall* c : fitting) {
      sum += std::abs(std::log(model_time(gpu, trial, launch, *c, precision) / c->measured.value));
    }
    return sum;
  };
  const bool winograd = start.winograd_efficiency.has_value();
  std::vector<double> best;
  double best_value = std::numeric_limits<double>::infinity();
  for (const auto& x0 : {start_at(0.6, 5, 30, 0.7, 0.5, 10, winograd),
                         start_at(0.8, 15, 8, 0.9, 0.7, 20, winograd)}) {
    const std::vector<double> x = nelder_mead(objective, x0, 0.3, 4000);
    const double value = objective(x);
    if (value < best_value) {
      best = x;
      best_value = value;
    }
  }
  return params_at(best, start);
}

ErrorStats conv_errors(const std::vector<ConvCall>& calls, const compute::GpuSpec& gpu,
                       const compute::AnalyticParams& params, Precision precision, bool held,
                       std::optional<TrainingPass> pass) {
  std::vector<double> errors;
  for (const ConvCall& c : calls) {
    if (c.held_out != held || (pass && c.pass != *pass)) continue;
    const double model = model_time(gpu, params.conv, params.launch_overhead, c, precision);
    errors.push_back((model - c.measured.value) / c.measured.value);
  }
  return error_stats(errors);
}

ErrorStats gemm_errors(const DeepBenchResults& results, const compute::GpuSpec& gpu,
                       const compute::AnalyticParams& params, Precision precision, bool held) {
  std::vector<double> errors;
  for (const DeepBenchGemm& g : results.gemms) {
    if (held_out(g) != held) continue;
    const double model =
        compute::analytic_kernel_time(
            gpu, params, compute::gemm_kernel_work(g.m, g.n, g.k, precision), precision)
            .value;
    errors.push_back((model - g.time.value) / g.time.value);
  }
  return error_stats(errors);
}

DeepBenchResults as_results(const DeepBenchMeasurements& measured) {
  DeepBenchResults out;
  out.file = measured.origin.file;
  out.precision = measured.precision == Precision::fp32 ? "Float" : "16 bit inputs";
  for (const MeasuredGemm& g : measured.gemms) {
    out.gemms.push_back(g.shape);
    out.gemms.back().time = g.time.median;
  }
  for (const MeasuredConv& c : measured.convs) {
    DeepBenchConv row = c.shape;
    row.forward = c.forward.median;
    row.backward_data.reset();
    if (c.backward_data) row.backward_data = c.backward_data->median;
    row.backward_weights = c.backward_weights.median;
    out.convs.push_back(row);
  }
  return out;
}

compute::AnalyticParams fit_analytic_params(const DeepBenchResults& fp32,
                                            const DeepBenchResults& mixed,
                                            const compute::GpuSpec& gpu,
                                            const compute::AnalyticParams& start) {
  compute::AnalyticParams a = start;
  a.launch_overhead = smallest_call({&fp32, &mixed});
  for (auto [p, db] : {std::pair{Precision::fp32, &fp32}, std::pair{Precision::tensor, &mixed}}) {
    const int i = static_cast<int>(p);
    a.gemm_efficiency[i] = fit_gemm_efficiency(*db, gpu, p, a.launch_overhead);
    a.conv.precision[i] =
        fit_conv_precision(conv_calls(*db), gpu, a.conv, p, a.launch_overhead, start.conv.of(p));
  }
  a.gemm_memory_efficiency = fit_gemm_memory_efficiency(fp32, gpu, a.launch_overhead);
  if (!fp32.lstms.empty() && !mixed.lstms.empty()) {
    a = fit_recurrent(lstm_calls(fp32), lstm_calls(mixed), gpu, a);
  }
  a.gemm_efficiency[static_cast<int>(Precision::fp16)] =
      a.gemm_efficiency[static_cast<int>(Precision::fp32)];
  a.conv.precision[static_cast<int>(Precision::fp16)] = a.conv.of(Precision::fp32);
  return a;
}

}  // namespace gpuscale::calib
