// A cuBLAS matrix product in DeepBench's terms: C (m x n) = op(A) op(B), column-major, op a
// transpose when asked. FP32 runs cublasSgemm in pedantic FP32; FP16 runs cublasGemmEx on FP16
// data with FP32 accumulation (Tensor Cores).
#pragma once

#include <string>

#include "calibration/tool/gpu_context.hpp"

namespace gpuscale::calib {

struct GemmShape {
  long m = 0, n = 0, k = 0;
  bool a_transposed = false;
  bool b_transposed = false;
};

void gemm(GpuContext& ctx, const GemmShape& shape, const void* a, const void* b, void* c);
std::string gemm_algorithm(const GpuContext& ctx);  // what the profile records for a GEMM

}  // namespace gpuscale::calib
