// The GPU's share of a GPU image decoder (sim/compute/decode_kernels.hpp): which kernels, what
// they move, and their time on a V100 against the bound a measured run puts on it.
#include <gtest/gtest.h>


#include "sim/compute/decode_kernels.hpp"
#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"

namespace gpuscale::compute {
namespace {

constexpr StoredImage kImageNetLike{188600, 1146e3};  // workloads/datasets/imagenet.yaml
constexpr double kSample = 3 * 224 * 224;

// One IDCT per image, then a resize and a crop-mirror-normalise per batch, each reading what the
// one before wrote: coefficients -> RGB image -> 8-bit sample -> float32 sample.
TEST(GpuDecodeKernels, OnePerImageThenTwoPerBatchAndTheBytesEachStageMoves) {
  const int batch = 32;
  const auto kernels = gpu_decode_kernels(kImageNetLike, kSample, batch);
  ASSERT_EQ(kernels.size(), static_cast<size_t>(batch) + 2);
  const double rgb = 3 * kImageNetLike.pixels;
  for (int i = 0; i < batch; ++i) {
    EXPECT_DOUBLE_EQ(kernels[static_cast<size_t>(i)].bytes, kImageNetLike.coefficient_bytes + rgb);
    EXPECT_DOUBLE_EQ(kernels[static_cast<size_t>(i)].flops,
                     32 * kImageNetLike.coefficient_bytes / 2);
  }
  EXPECT_DOUBLE_EQ(kernels[batch].bytes, batch * (rgb + kSample));
  EXPECT_DOUBLE_EQ(kernels[batch + 1].bytes, batch * 5 * kSample);
  for (const KernelWork& k : kernels) EXPECT_EQ(k.kind, KernelClass::elementwise);
}

// On a V100 an image costs more than a kernel's fixed cost and far less than the 256 us per
// image one V100 has at most when DALI feeds ShuffleNet 3,910 images/s
// (docs/gpu-input-pipeline-sources.md §1).
TEST(GpuDecodeKernels, AV100ImageTakesLessThanAMeasuredRunAllows) {
  const GpuSpec v100 = load_gpu_spec("V100-SXM2");
  const AnalyticParams params = load_analytic_params(shipped_analytic_params_path());
  const int batch = 256;
  const double per_image = gpu_decode_time(v100, params, kImageNetLike, kSample, batch).value / batch;
  EXPECT_GT(per_image, params.launch_overhead.value);
  EXPECT_LT(per_image, 256e-6);
  // The sum of its kernels, each on the roofline.
  double sum = 0;
  for (const KernelWork& k : gpu_decode_kernels(kImageNetLike, kSample, batch))
    sum += analytic_kernel_time(v100, params, k, Precision::fp32).value;
  EXPECT_DOUBLE_EQ(gpu_decode_time(v100, params, kImageNetLike, kSample, batch).value, sum);
}

}  // namespace
}  // namespace gpuscale::compute
