// gpuscale-calibrate: measures per-layer kernel times of gpuscale workloads with cuDNN and
// cuBLAS on a real GPU, and DeepBench's shapes for checking the cross-GPU projection. Writes a
// profile that `gpuscale run --profile FILE` replays (docs/calibration.md). Exit status: 0
// success, 2 bad input or no usable GPU (one line says why), 1 our bug.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "calibration/tool/cuda_status.hpp"
#include "calibration/tool/deepbench_profiler.hpp"
#include "calibration/tool/device_info.hpp"
#include "calibration/tool/microbenchmarks.hpp"
#include "calibration/tool/network_profiler.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/output_file.hpp"
#include "topologies/core/units.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::calib {
namespace {

struct Options {
  std::string workload;
  std::vector<std::string> overrides;
  std::vector<std::string> batches{"16", "32", "64"};
  std::string shapes;
  std::string deepbench_dir = GPUSCALE_DEEPBENCH_DIR;
  std::string precision = "fp32";
  std::string output;
  int device = 0;
  TimingMethod timing;
  std::string workspace = "1 GiB";
  std::string gpu_model;
  std::string source;
};

// "16,32,max": the batch sizes, and whether to find the largest that fits.
NetworkProfileOptions batch_options(const std::vector<std::string>& texts) {
  NetworkProfileOptions options;
  for (const std::string& text : texts) {
    if (text == "max") {
      options.largest_that_fits = true;
      continue;
    }
    long batch = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), batch);
    if (ec != std::errc{} || end != text.data() + text.size() || batch < 1) {
      throw ConfigError({"--batch", 0}, fmt::format("'{}' is not a batch size (a whole number "
                                                    ">= 1, or max: the largest that fits)",
                                                    text));
    }
    options.batches.push_back(batch);
  }
  return options;
}

compute::Precision precision_of(const std::string& name) {
  if (name == "fp32") return compute::Precision::fp32;
  if (name == "tensor") return compute::Precision::tensor;
  throw ConfigError({"--precision", 0}, fmt::format("'{}' is not a precision the tool measures "
                                                    "(fp32, or tensor: FP16 with FP32 "
                                                    "accumulation on Tensor Cores)",
                                                    name));
}

std::size_t workspace_bytes(const std::string& text) {
  try {
    return static_cast<std::size_t>(parse_bytes(text).value);
  } catch (const std::invalid_argument& e) {
    throw ConfigError({"--workspace", 0}, e.what());
  }
}

std::string method_text(const Options& o) {
  return fmt::format("{} warm-up runs, then the median of {} runs, each timed with CUDA events "
                     "around the pass's library calls on one stream, enqueued back to back; "
                     "spread is the interquartile range; convolution algorithms chosen by "
                     "cudnnFind*AlgorithmEx within a {} workspace",
                     o.timing.warmup, o.timing.runs, o.workspace);
}

// The DeepBench file of the precision's shapes.
std::string deepbench_csv(const Options& o, compute::Precision precision) {
  const char* file = precision == compute::Precision::fp32 ? "results_fp32.csv"
                                                           : "results_fp16_mixed.csv";
  return (std::filesystem::path(o.deepbench_dir) / file).string();
}

int run(const Options& o) {
  const compute::Precision precision = precision_of(o.precision);
  NetworkProfileOptions batches = batch_options(o.batches);
  batches.timing = o.timing;
  batches.workspace_bytes = workspace_bytes(o.workspace);
  // Inputs are checked before the GPU is touched, so a typo costs nothing.
  std::optional<wl::Workload> workload;
  if (!o.workload.empty()) workload = wl::load_workload(o.workload, o.overrides);

  GpuContext ctx(o.device, precision);
  compute::MeasurementHeader header = describe_machine(ctx, o.gpu_model);
  header.method = method_text(o);
  header.source = o.source;
  header.microbenchmarks = run_microbenchmarks(ctx, o.timing);
  const compute::Microbenchmarks& micro = *header.microbenchmarks;
  fmt::print(stderr, "{} ({}): launch overhead {}, device copy {}; on the host: launch {}, "
             "launch + sync {}\n",
             header.gpu, header.gpu_details->name, format_seconds(micro.launch_overhead),
             format_bandwidth(micro.device_copy_bandwidth), format_seconds(micro.launch->median),
             format_seconds(micro.launch_sync->median));

  if (workload) {
    const NetworkProfile measured =
        profile_network(ctx, *workload, wl::compute_costs(*workload), batches);
    if (measured.layers.empty()) {
      throw ConfigError({"--batch", 0}, fmt::format("no batch size of {} fits on this GPU "
                                                    "(all ran out of memory): try smaller ones",
                                                    workload->name));
    }
    compute::MeasuredProfile profile;
    profile.header = header;
    profile.precision = precision;
    profile.workload = workload->name;
    profile.out_of_memory_batches = measured.out_of_memory_batches;
    profile.layers = measured.layers;
    write_output_file(o.output, compute::profile_to_yaml(profile), {"--output", 0});
  } else {
    DeepBenchMeasurements m =
        profile_deepbench_shapes(ctx, deepbench_csv(o, precision), o.timing,
                                 batches.workspace_bytes);
    m.header = header;
    write_output_file(o.output, deepbench_measurements_to_yaml(m), {"--output", 0});
  }
  fmt::print(stderr, "wrote {}\n", o.output);
  return 0;
}

}  // namespace
}  // namespace gpuscale::calib

int main(int argc, char** argv) {
  using gpuscale::calib::Options;
  Options o;
  CLI::App app{"gpuscale-calibrate: measure per-layer kernel times with cuDNN and cuBLAS "
               "(docs/calibration.md)"};
  app.set_version_flag("--version", "gpuscale-calibrate 0.1.0");
  auto* workload = app.add_option("--workload", o.workload,
                                  "A shipped model (resnet-50) or a workload .yaml file");
  app.add_option("--set", o.overrides, "Override a workload argument, KEY=VALUE")
      ->needs(workload);
  app.add_option("--batch", o.batches,
                 "Batch sizes to measure (default 16,32,64); max: also the largest that fits")
      ->delimiter(',')
      ->needs(workload);
  auto* shapes = app.add_option("--shapes", o.shapes,
                                "Time a benchmark's shapes instead of a workload: deepbench")
                     ->check(CLI::IsMember({"deepbench"}))
                     ->excludes(workload);
  app.add_option("--deepbench-dir", o.deepbench_dir,
                 "Folder of DeepBench's results_fp32.csv and results_fp16_mixed.csv")
      ->needs(shapes);
  app.add_option("--precision", o.precision, "fp32 or tensor (FP16, FP32 accumulation)")
      ->capture_default_str();
  app.add_option("-o,--output", o.output, "The file to write (YAML)")->required();
  app.add_option("--device", o.device, "CUDA device index")->capture_default_str();
  app.add_option("--warmup", o.timing.warmup, "Untimed runs before timing")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--runs", o.timing.runs, "Timed runs; the median is reported")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--workspace", o.workspace,
                 "Most memory a convolution algorithm may use (MXNet's default: 1 GiB)")
      ->capture_default_str();
  app.add_option("--gpu-model", o.gpu_model,
                 "The topologies/gpus/ spec of this GPU, when its name does not say");
  app.add_option("--source", o.source, "Who measured, where (recorded in the file)");
  try {
    app.parse(argc, argv);
    if (o.workload.empty() && o.shapes.empty()) {
      throw CLI::ValidationError("give --workload MODEL or --shapes deepbench");
    }
    return gpuscale::calib::run(o);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "gpuscale-calibrate: " << e.what() << " (see gpuscale-calibrate --help)\n";
    return 2;
  } catch (const gpuscale::ConfigError& e) {
    std::cerr << e.what() << '\n';
    return 2;
  } catch (const gpuscale::calib::CudaFailure& e) {
    std::cerr << "gpuscale-calibrate: " << e.what() << '\n';
    return 2;
  } catch (const gpuscale::calib::OutOfDeviceMemory& e) {
    std::cerr << "gpuscale-calibrate: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gpuscale-calibrate: internal error (please report it): " << e.what() << '\n';
    return 1;
  }
}
