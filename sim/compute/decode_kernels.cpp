#include "sim/compute/decode_kernels.hpp"

namespace gpuscale::compute {

std::vector<KernelWork> gpu_decode_kernels(const StoredImage& image, double sample_elements,
                                           int batch) {
  constexpr double kRgbBytesPerPixel = 3;
  constexpr double kCoefficientBytes = 2;  // int16
  constexpr double kIdctFlopsPerCoefficient = 32;
  const double rgb_bytes = kRgbBytesPerPixel * image.pixels;
  const double coefficients = image.coefficient_bytes / kCoefficientBytes;
  std::vector<KernelWork> kernels(
      static_cast<size_t>(batch),
      KernelWork{.kind = KernelClass::elementwise,
                 .flops = kIdctFlopsPerCoefficient * coefficients,
                 .bytes = image.coefficient_bytes + rgb_bytes});
  const double n = batch;
  kernels.push_back({.kind = KernelClass::elementwise,
                     .flops = 8 * sample_elements * n,
                     .bytes = (rgb_bytes + sample_elements) * n});
  kernels.push_back({.kind = KernelClass::elementwise,
                     .flops = 2 * sample_elements * n,
                     .bytes = (sample_elements + 4 * sample_elements) * n});
  return kernels;
}

Seconds gpu_decode_time(const GpuSpec& gpu, const AnalyticParams& params, const StoredImage& image,
                        double sample_elements, int batch) {
  double seconds = 0;
  for (const KernelWork& k : gpu_decode_kernels(image, sample_elements, batch)) {
    seconds += analytic_kernel_time(gpu, params, k, Precision::fp32).value;
  }
  return {seconds};
}

}  // namespace gpuscale::compute
