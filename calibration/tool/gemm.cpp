#include "calibration/tool/gemm.hpp"

#include "calibration/tool/cuda_status.hpp"

namespace gpuscale::calib {

void gemm(GpuContext& ctx, const GemmShape& s, const void* a, const void* b, void* c) {
  const float one = 1, zero = 0;
  const cublasOperation_t op_a = s.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = s.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const int lda = s.a_transposed ? k : m;
  const int ldb = s.b_transposed ? n : k;
  if (!ctx.element().half()) {
    GS_CUBLAS(cublasSgemm(ctx.cublas(), op_a, op_b, m, n, k, &one, static_cast<const float*>(a),
                          lda, static_cast<const float*>(b), ldb, &zero, static_cast<float*>(c),
                          m));
    return;
  }
  GS_CUBLAS(cublasGemmEx(ctx.cublas(), op_a, op_b, m, n, k, &one, a, CUDA_R_16F, lda, b,
                         CUDA_R_16F, ldb, &zero, c, CUDA_R_16F, m, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT));
}

std::string gemm_algorithm(const GpuContext& ctx) {
  return ctx.element().half() ? "cublasGemmEx FP16/FP32-accumulate" : "cublasSgemm";
}

}  // namespace gpuscale::calib
