#include "calibration/tool/device_info.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <fstream>
#include <regex>

#include "calibration/tool/cuda_status.hpp"
#include "sim/compute/gpu_spec.hpp"

namespace gpuscale::calib {
namespace {

// "NVIDIA H200" -> "h200"; "Tesla V100-SXM2-16GB" -> "v100-sxm2-16gb".
std::string model_part(const std::string& device_name) {
  std::string name = compute::gpu_model_key(device_name);
  for (const char* vendor : {"nvidia ", "tesla "}) {
    if (name.starts_with(vendor)) name.erase(0, std::string(vendor).size());
  }
  return name;
}

// The name of the shipped spec whose file name and the device's name are one a prefix of the
// other ("NVIDIA H200" -> h200-sxm.yaml -> "H200-SXM").
std::string spec_for_device(const std::string& device_name) {
  const std::string model = model_part(device_name);
  std::vector<std::string> matches;
  const std::vector<std::string> shipped = compute::shipped_gpus().names();
  for (const std::string& spec : shipped) {
    const std::string s = compute::gpu_model_key(spec);
    if (model.starts_with(s) || s.starts_with(model)) matches.push_back(spec);
  }
  if (matches.size() == 1) return compute::load_gpu_spec(matches.front()).name;
  throw CudaFailure(fmt::format("no single GPU spec matches the device '{}' ({}); name it with "
                                "--gpu-model (shipped: {})",
                                device_name,
                                matches.empty() ? "none" : fmt::format("{}", fmt::join(matches, ", ")),
                                fmt::join(shipped, ", ")));
}

std::string version_of(int encoded, int major_unit, int minor_unit) {
  return fmt::format("{}.{}.{}", encoded / major_unit, (encoded % major_unit) / minor_unit,
                     encoded % minor_unit);
}

// The kernel module's version from /proc ("580.159.04"); the CUDA version the driver supports
// where /proc does not say.
std::string driver_version() {
  std::ifstream proc("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(proc, line)) {
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"((\d+\.\d+(\.\d+)?))"))) return m[1];
  }
  int cuda = 0;
  GS_CUDA(cudaDriverGetVersion(&cuda));
  return fmt::format("unknown (supports CUDA {}.{})", cuda / 1000, (cuda % 1000) / 10);
}

std::string today() {
  const std::chrono::year_month_day day{
      std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now())};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(day.year()),
                     static_cast<unsigned>(day.month()), static_cast<unsigned>(day.day()));
}

}  // namespace

compute::MeasurementHeader describe_machine(const GpuContext& ctx, const std::string& gpu_model) {
  cudaDeviceProp prop{};
  GS_CUDA(cudaGetDeviceProperties(&prop, ctx.device()));
  int sm_khz = 0, memory_khz = 0;
  GS_CUDA(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, ctx.device()));
  GS_CUDA(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, ctx.device()));

  compute::MeasurementHeader h;
  h.gpu = gpu_model.empty() ? spec_for_device(prop.name) : gpu_model;
  compute::MeasuredGpu gpu;
  gpu.name = prop.name;
  gpu.compute_capability = fmt::format("{}.{}", prop.major, prop.minor);
  gpu.sm_count = prop.multiProcessorCount;
  gpu.sm_clock.value = sm_khz * 1e3;
  gpu.memory_clock.value = memory_khz * 1e3;
  gpu.memory.value = static_cast<double>(prop.totalGlobalMem);
  h.gpu_details = gpu;

  int runtime = 0, cublas_major = 0, cublas_minor = 0, cublas_patch = 0;
  GS_CUDA(cudaRuntimeGetVersion(&runtime));
  GS_CUBLAS(cublasGetProperty(MAJOR_VERSION, &cublas_major));
  GS_CUBLAS(cublasGetProperty(MINOR_VERSION, &cublas_minor));
  GS_CUBLAS(cublasGetProperty(PATCH_LEVEL, &cublas_patch));
  h.driver = driver_version();
  h.cuda = fmt::format("{}.{}", runtime / 1000, (runtime % 1000) / 10);
  // cuDNN 9 encodes its version as major * 10000 + minor * 100 + patch.
  h.cudnn = version_of(static_cast<int>(cudnnGetVersion()), 10000, 100);
  h.cublas = fmt::format("{}.{}.{}", cublas_major, cublas_minor, cublas_patch);
  h.framework = "gpuscale-calibrate 0.1 (cuDNN and cuBLAS calls, no framework)";
  h.date = today();
  return h;
}

}  // namespace gpuscale::calib
