#include "calibration/tool/deepbench_profiler.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <functional>

#include "calibration/tool/convolution.hpp"
#include "calibration/tool/gemm.hpp"

namespace gpuscale::calib {
namespace {

TimedCall timed(const Timing& t, std::string algorithm) {
  return {{t.median}, {t.spread}, std::move(algorithm)};
}

MeasuredGemm time_gemm(GpuContext& ctx, const DeepBenchGemm& row, const TimingMethod& timing) {
  const GemmShape shape{row.m, row.n, row.k, row.a_transposed, row.b_transposed};
  DeviceBuffer a = ctx.tensor(static_cast<std::size_t>(row.m * row.k));
  DeviceBuffer b = ctx.tensor(static_cast<std::size_t>(row.k * row.n));
  DeviceBuffer c = ctx.tensor(static_cast<std::size_t>(row.m * row.n));
  const Timing t = time_on_stream(ctx, [&] { gemm(ctx, shape, a.get(), b.get(), c.get()); },
                                  timing);
  MeasuredGemm m;
  m.shape = row;
  m.shape.time = {};
  m.time = timed(t, gemm_algorithm(ctx));
  return m;
}

MeasuredConv time_conv(GpuContext& ctx, const DeepBenchConv& row, const TimingMethod& timing,
                       const DeviceBuffer& workspace, ConvAlgorithmCache& cache) {
  using compute::TrainingPass;
  const compute::ConvShape s = conv_shape(row);
  const auto input = static_cast<std::size_t>(s.batch * s.in_channels * s.in_height * s.in_width);
  const auto output =
      static_cast<std::size_t>(s.batch * s.out_channels * s.out_height() * s.out_width());
  const auto filters =
      static_cast<std::size_t>(s.out_channels * s.in_channels * s.filter_height * s.filter_width);
  DeviceBuffer x = ctx.tensor(input), dx = ctx.tensor(input);
  DeviceBuffer y = ctx.tensor(output), dy = ctx.tensor(output);
  DeviceBuffer w = ctx.tensor(filters), dw = ctx.tensor(filters);
  Convolution conv(ctx, s, workspace, cache);

  MeasuredConv m;
  m.shape = row;
  m.shape.forward = {};
  m.shape.backward_data.reset();
  m.shape.backward_weights = {};
  // Each pass runs (and so finds its algorithm) before its algorithm is asked for.
  const auto time_pass = [&](TrainingPass pass, const std::function<void()>& enqueue) {
    const Timing t = time_on_stream(ctx, enqueue, timing);
    return timed(t, conv.algorithm(pass));
  };
  m.forward = time_pass(TrainingPass::forward, [&] { conv.forward(x.get(), w.get(), y.get()); });
  if (row.backward_data) {
    m.backward_data = time_pass(TrainingPass::backward_data,
                                [&] { conv.backward_data(w.get(), dy.get(), dx.get()); });
  }
  m.backward_weights = time_pass(TrainingPass::backward_weights,
                                 [&] { conv.backward_weights(x.get(), dy.get(), dw.get()); });
  return m;
}

}  // namespace

DeepBenchMeasurements profile_deepbench_shapes(GpuContext& ctx, const std::string& csv_path,
                                               const TimingMethod& timing,
                                               std::size_t workspace_bytes) {
  const DeepBenchResults rows = read_deepbench_csv(csv_path);
  DeepBenchMeasurements out;
  out.precision = ctx.element().precision;
  out.shapes_file = std::filesystem::path(csv_path).filename().string();
  for (const DeepBenchGemm& row : rows.gemms) out.gemms.push_back(time_gemm(ctx, row, timing));
  fmt::print(stderr, "{}: {} GEMMs timed\n", out.shapes_file, out.gemms.size());
  const DeviceBuffer workspace(workspace_bytes);
  ConvAlgorithmCache cache;
  for (const DeepBenchConv& row : rows.convs) {
    out.convs.push_back(time_conv(ctx, row, timing, workspace, cache));
  }
  fmt::print(stderr, "{}: {} convolutions timed\n", out.shapes_file, out.convs.size());
  return out;
}

}  // namespace gpuscale::calib
