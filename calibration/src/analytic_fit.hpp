// The derivation of the analytic model's constants (sim/compute/analytic-v100.yaml) from
// DeepBench's V100 kernel times, and the model's error on the rows no constant saw
// (docs/compute-model.md#constants).
//
// Every row is assigned to the fitting half or the held-out half by its shape alone, before any
// fitting: held out when the FNV-1a hash of the shape's text is odd. Both files (FP32 and FP16
// mixed) hold the same shapes, so a shape is on the same side in both.
//
//   launch_overhead        the smallest time of any call in either file
//   gemm efficiency        median over the fitting half's compute-bound GEMMs of
//                          FLOPs / ((t - launch) x peak), per precision
//   gemm memory efficiency median over the fitting half's memory-bound FP32 GEMMs of
//                          bytes / ((t - launch) x copy bandwidth)
//   convolution constants  (conv_model.hpp) per precision: the values that minimise the sum of
//                          |log(model / measured)| over the fitting half's convolution passes,
//                          fractions kept in (0, 1], by Nelder-Mead from two fixed starts
//   recurrent constants    fitted on the LSTM rows with the constants above (lstm_fit.hpp)
#pragma once

#include <string>
#include <vector>

#include "calibration/src/deepbench.hpp"
#include "calibration/src/deepbench_measurements.hpp"
#include "calibration/src/error_stats.hpp"
#include "sim/compute/conv_model.hpp"
#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"

namespace gpuscale::calib {

// Whether the shape written as `text` is held out: its FNV-1a hash is odd.
bool held_out_shape(const std::string& text);
bool held_out(const DeepBenchConv& row);
bool held_out(const DeepBenchGemm& row);

// One timed convolution pass of DeepBench.
struct ConvCall {
  int line = 0;
  compute::ConvShape shape;
  compute::TrainingPass pass = compute::TrainingPass::forward;
  Seconds measured;
  bool held_out = false;
};

// Every pass of every row (input layers have no backward-data).
std::vector<ConvCall> conv_calls(const DeepBenchResults& results);

// The smallest time of any call in the files.
Seconds smallest_call(const std::vector<const DeepBenchResults*>& files);

double fit_gemm_efficiency(const DeepBenchResults& results, const compute::GpuSpec& gpu,
                              compute::Precision precision, Seconds launch);
double fit_gemm_memory_efficiency(const DeepBenchResults& results,
                                     const compute::GpuSpec& gpu, Seconds launch);

// Fits the constants of `start` that the model uses (gemm efficiencies per pass, fixed cost,
// epilogue, memory efficiency; where `start` has a winograd_efficiency, the non-fused Winograd
// efficiencies (3x3, 5x5) and fixed cost and the fused Winograd efficiency) on the calls not
// held out, timed as DeepBench ran them: FP32 with cuDNN's Find, any algorithm, any workspace;
// FP16 forced to implicit GEMM. `start.channel_multiple` and the tiles are kept.
compute::ConvPrecisionParams fit_conv_precision(const std::vector<ConvCall>& calls,
                                                const compute::GpuSpec& gpu,
                                                const compute::ConvModelParams& model,
                                                compute::Precision precision, Seconds launch,
                                                compute::ConvPrecisionParams start);

// (model - measured) / measured over `calls` whose held_out is `held`, optionally one pass.
ErrorStats conv_errors(const std::vector<ConvCall>& calls, const compute::GpuSpec& gpu,
                       const compute::AnalyticParams& params, compute::Precision precision,
                       bool held, std::optional<compute::TrainingPass> pass = std::nullopt);
ErrorStats gemm_errors(const DeepBenchResults& results, const compute::GpuSpec& gpu,
                       const compute::AnalyticParams& params, compute::Precision precision,
                       bool held);

// Measurements of DeepBench's shapes on another GPU (deepbench_measurements.hpp) as DeepBench
// results: each call's median as its time, so that the same derivation fits them.
DeepBenchResults as_results(const DeepBenchMeasurements& measured);

// The whole derivation (the header's list) on one GPU's FP32 and FP16-mixed results: every
// constant `start` has, refitted; the framework overhead and the fp16 (CUDA-core) constants,
// which no file measures, taken from `start` and from fp32 respectively; the recurrent constants
// taken from `start` when the files have no LSTM rows (measurements of other GPUs).
compute::AnalyticParams fit_analytic_params(const DeepBenchResults& fp32,
                                            const DeepBenchResults& mixed,
                                            const compute::GpuSpec& gpu,
                                            const compute::AnalyticParams& start);

}  // namespace gpuscale::calib
