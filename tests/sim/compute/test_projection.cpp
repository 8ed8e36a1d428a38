// Projection of a measured time to another GPU (sim/compute/projection.hpp) in closed form, on
// two round-number GPUs: compute-bound work scales by the peak ratio, memory-bound work by the
// copy-bandwidth ratio, work across the ridge by the roofline, launch overheads apart.
#include <gtest/gtest.h>

#include <vector>

#include "sim/compute/projection.hpp"

namespace gpuscale::compute {
namespace {

// X: 40 TFLOP/s fp32, 400 TFLOP/s tensor, 2000 GB/s copies (ridge 20 FLOP/B fp32).
// Y: 10 TFLOP/s fp32, 100 TFLOP/s tensor, 800 GB/s copies (ridge 12.5 FLOP/B fp32).
GpuSpec gpu(const char* name, double fp32, double copy) {
  GpuSpec g;
  g.name = name;
  g.memory_bandwidth = {copy / 0.8};
  g.copy_efficiency = 0.8;
  g.peak_fp32 = {fp32};
  g.peak_fp16 = {2 * fp32};
  g.peak_tensor = FlopsPerSecond{10 * fp32};
  return g;
}

const ProjectionEnd kX{gpu("X", 40e12, 2000e9), {2e-6}};
const ProjectionEnd kY{gpu("Y", 10e12, 800e9), {8e-6}};

double project(double measured, const std::vector<KernelWork>& kernels,
               Precision precision = Precision::fp32) {
  return project_time({measured}, kernels, precision, kX, kY).value;
}

TEST(Projection, ComputeBoundWorkScalesByThePeakRatio) {
  const KernelWork gemm{KernelClass::gemm, 1e12, 1e9};  // 1000 FLOP/B
  EXPECT_DOUBLE_EQ(project(102e-6, {gemm}), 8e-6 + 100e-6 * 40.0 / 10.0);
  // The ratio is the precision's: 400 / 100 as well for tensor, on other peaks.
  EXPECT_DOUBLE_EQ(project(102e-6, {gemm}, Precision::tensor), 8e-6 + 100e-6 * 4.0);
  EXPECT_DOUBLE_EQ(roofline_time(kX.gpu, gemm, Precision::tensor).value, 1e12 / 400e12);
}

TEST(Projection, MemoryBoundWorkScalesByTheCopyBandwidthRatio) {
  const KernelWork relu{KernelClass::elementwise, 1e6, 1e9};  // 0.001 FLOP/B
  EXPECT_DOUBLE_EQ(project(52e-6, {relu}), 8e-6 + 50e-6 * 2000.0 / 800.0);
  EXPECT_DOUBLE_EQ(roofline_time(kY.gpu, relu, Precision::fp32).value, 1e9 / 800e9);
}

TEST(Projection, WorkAcrossTheRidgeScalesByTheRooflineOfEach) {
  // 16 FLOP/B: memory-bound on X (ridge 20), compute-bound on Y (ridge 12.5).
  const KernelWork conv{KernelClass::conv_forward, 16e9, 1e9};
  const double on_x = 1e9 / 2000e9, on_y = 16e9 / 10e12;
  EXPECT_DOUBLE_EQ(project(1002e-6, {conv}), 8e-6 + 1000e-6 * on_y / on_x);
}

TEST(Projection, LaunchOverheadsArePerKernelAndNotScaled) {
  const KernelWork gemm{KernelClass::gemm, 1e12, 1e9};
  const KernelWork bias{KernelClass::elementwise, 1e7, 1e8};
  // Two kernels: two launches off X's time, two of Y's on; the rest scaled by the sum of the
  // rooflines (the body split between the kernels as their roofline times on X).
  const double x = 1e12 / 40e12 + 1e8 / 2000e9, y = 1e12 / 10e12 + 1e8 / 800e9;
  EXPECT_DOUBLE_EQ(project(300e-6, {gemm, bias}), 2 * 8e-6 + (300e-6 - 2 * 2e-6) * y / x);
  // A time below X's launch overheads keeps only Y's.
  EXPECT_DOUBLE_EQ(project(3e-6, {gemm, bias}), 2 * 8e-6);
  // The same GPU at both ends: only the launch overheads change.
  const ProjectionEnd x_again{kX.gpu, {8e-6}};
  EXPECT_DOUBLE_EQ(project_time({50e-6}, std::vector{gemm}, Precision::fp32, kX, x_again).value,
                   56e-6);
}

TEST(Projection, APassMeasuredAsZeroRanNothingAndStaysZero) {
  EXPECT_EQ(project(0, {{KernelClass::gemm, 1e12, 1e9}}), 0);
  EXPECT_THROW(project(-1e-6, {{KernelClass::gemm, 1e12, 1e9}}), std::invalid_argument);
}

}  // namespace
}  // namespace gpuscale::compute
