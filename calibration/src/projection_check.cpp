#include "calibration/src/projection_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <span>

#include "calibration/src/error_stats.hpp"
#include "sim/compute/projection.hpp"

namespace gpuscale::calib {
namespace {

using compute::KernelClass;
using compute::TrainingPass;

// DeepBench's first line names its precision: "Float", or "16 bit inputs, 16 bit
// multiplication, 32 bit addition" for the Tensor Core runs.
bool same_precision(compute::Precision measured, const std::string& deepbench) {
  return measured == compute::Precision::fp32 ? deepbench == "Float"
                                              : deepbench.starts_with("16 bit inputs");
}

bool same_shape(const DeepBenchGemm& a, const DeepBenchGemm& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.a_transposed == b.a_transposed &&
         a.b_transposed == b.b_transposed;
}

bool same_shape(const DeepBenchConv& a, const DeepBenchConv& b) {
  return a.w == b.w && a.h == b.h && a.c == b.c && a.n == b.n && a.k == b.k && a.s == b.s &&
         a.r == b.r && a.pad_w == b.pad_w && a.pad_h == b.pad_h && a.stride_w == b.stride_w &&
         a.stride_h == b.stride_h;
}

template <typename Row>
const Row* row_at(const std::vector<Row>& rows, int line) {
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.line == line; });
  return it == rows.end() ? nullptr : &*it;
}

std::optional<ErrorSummary> summarise(const std::string& operation,
                                      const std::vector<const ProjectedCall*>& calls) {
  if (calls.empty()) return std::nullopt;
  std::vector<double> errors;
  for (const ProjectedCall* c : calls) errors.push_back(c->error());
  const ErrorStats e = error_stats(errors);
  return ErrorSummary{operation, e.n, e.median_abs, e.p90_abs, e.median_signed};
}

std::vector<ErrorSummary> summary_of(const std::vector<ProjectedCall>& calls) {
  std::vector<ErrorSummary> out;
  auto add = [&](const std::string& operation, auto&& selected) {
    std::vector<const ProjectedCall*> chosen;
    for (const ProjectedCall& c : calls) {
      if (selected(c.kind)) chosen.push_back(&c);
    }
    if (auto s = summarise(operation, chosen)) out.push_back(*s);
  };
  add("gemm", [](KernelClass k) { return k == KernelClass::gemm; });
  for (int p = 0; p < compute::kTrainingPassCount; ++p) {
    const auto pass = static_cast<TrainingPass>(p);
    add("conv " + compute::to_string(pass),
        [&](KernelClass k) { return k == compute::conv_kernel_class(pass); });
  }
  return out;
}

}  // namespace

ProjectionCheck check_projection(const DeepBenchMeasurements& measured,
                                 const DeepBenchResults& reference,
                                 const compute::GpuSpec& measured_on,
                                 const compute::GpuSpec& reference_gpu,
                                 const compute::AnalyticParams& params) {
  if (!same_precision(measured.precision, reference.precision)) {
    throw ConfigError(Origin{reference.file, 1},
                      fmt::format("DeepBench results of precision '{}' cannot check measurements "
                                  "at {} ({}): use the file of the same precision",
                                  reference.precision, compute::to_string(measured.precision),
                                  measured.origin.file));
  }
  const compute::Precision precision = measured.precision;
  const Seconds from_launch = measured.header.microbenchmarks
                                  ? measured.header.microbenchmarks->launch_overhead
                                  : params.launch_overhead;
  const compute::ProjectionEnd from{measured_on, from_launch};
  const compute::ProjectionEnd to{reference_gpu, params.launch_overhead};

  ProjectionCheck check;
  // One library call counts one launch: DeepBench's launch overhead is the fixed cost of a call.
  auto add = [&](int line, const compute::KernelWork& work, Seconds time, Seconds deepbench) {
    const Seconds projected =
        compute::project_time(time, std::span(&work, 1), precision, from, to);
    check.calls.push_back({line, work.kind, time, projected, deepbench});
  };
  for (const MeasuredGemm& g : measured.gemms) {
    const DeepBenchGemm* ref = row_at(reference.gemms, g.shape.line);
    if (ref == nullptr || !same_shape(*ref, g.shape)) {
      check.unmatched_lines.push_back(g.shape.line);
      continue;
    }
    add(g.shape.line, compute::gemm_kernel_work(g.shape.m, g.shape.n, g.shape.k, precision),
        g.time.median, ref->time);
  }
  for (const MeasuredConv& c : measured.convs) {
    const DeepBenchConv* ref = row_at(reference.convs, c.shape.line);
    if (ref == nullptr || !same_shape(*ref, c.shape)) {
      check.unmatched_lines.push_back(c.shape.line);
      continue;
    }
    const compute::ConvShape shape = conv_shape(c.shape);
    auto work = [&](TrainingPass pass) { return compute::conv_kernel_work(shape, pass, precision); };
    add(c.shape.line, work(TrainingPass::forward), c.forward.median, ref->forward);
    if (c.backward_data && ref->backward_data) {
      add(c.shape.line, work(TrainingPass::backward_data), c.backward_data->median,
          *ref->backward_data);
    }
    add(c.shape.line, work(TrainingPass::backward_weights), c.backward_weights.median,
        ref->backward_weights);
  }
  const std::size_t matched_rows =
      measured.gemms.size() + measured.convs.size() - check.unmatched_lines.size();
  check.unmeasured_rows =
      static_cast<int>(reference.gemms.size() + reference.convs.size() - matched_rows);
  check.summary = summary_of(check.calls);
  return check;
}

ProjectionCheck check_analytic(const DeepBenchMeasurements& measured,
                               const compute::GpuSpec& measured_on,
                               const compute::AnalyticParams& params) {
  const compute::Precision precision = measured.precision;
  ProjectionCheck check;
  for (const MeasuredGemm& g : measured.gemms) {
    const compute::KernelWork work =
        compute::gemm_kernel_work(g.shape.m, g.shape.n, g.shape.k, precision);
    const Seconds analytic = compute::analytic_kernel_time(measured_on, params, work, precision);
    check.calls.push_back({g.shape.line, work.kind, g.time.median, analytic, g.time.median});
  }
  // The calibration tool times each pass with the algorithm cuDNN's Find ranks fastest, as
  // autotuning does.
  const compute::ConvAlgorithmPolicy find{true, std::numeric_limits<double>::infinity()};
  for (const MeasuredConv& c : measured.convs) {
    const compute::ConvShape shape = conv_shape(c.shape);
    auto add = [&](TrainingPass pass, Seconds time) {
      const Seconds analytic =
          compute::choose_conv_algorithm(measured_on, params.conv, params.launch_overhead, shape,
                                         pass, precision, find)
              .time;
      check.calls.push_back({c.shape.line, compute::conv_kernel_class(pass), time, analytic, time});
    };
    add(TrainingPass::forward, c.forward.median);
    if (c.backward_data) add(TrainingPass::backward_data, c.backward_data->median);
    add(TrainingPass::backward_weights, c.backward_weights.median);
  }
  check.summary = summary_of(check.calls);
  return check;
}

std::string format_error_summary(const std::vector<ErrorSummary>& summary) {
  std::string out = fmt::format("{:<32} {:>4} {:>12} {:>10} {:>11}\n", "operation", "n",
                                "median |err|", "p90 |err|", "median err");
  for (const ErrorSummary& s : summary) {
    out += fmt::format("{:<32} {:>4} {:>12.3f} {:>10.3f} {:>+11.3f}\n", s.operation, s.n,
                       s.median_abs, s.p90_abs, s.median_signed);
  }
  return out;
}

}  // namespace gpuscale::calib
