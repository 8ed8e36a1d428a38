#include "calibration/tool/cuda_status.hpp"

#include <fmt/format.h>

namespace gpuscale::calib {
namespace {

// The call's name without its arguments: "cudnnConvolutionForward(handle, ...)" -> the name.
std::string function_of(const char* call) {
  const std::string text(call);
  return text.substr(0, text.find('('));
}

const char* cublas_status_name(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

}  // namespace

void check_cuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clear the sticky error of a failed allocation, so the tool can go on
  const std::string message =
      fmt::format("{}: {} ({})", function_of(call), cudaGetErrorName(status),
                  cudaGetErrorString(status));
  if (status == cudaErrorMemoryAllocation) throw OutOfDeviceMemory(message);
  throw CudaFailure(message);
}

void check_cudnn(cudnnStatus_t status, const char* call) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  const std::string message = fmt::format("{}: {}", function_of(call), cudnnGetErrorString(status));
  if (status == CUDNN_STATUS_ALLOC_FAILED) throw OutOfDeviceMemory(message);
  throw CudaFailure(message);
}

void check_cublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const std::string message = fmt::format("{}: {}", function_of(call), cublas_status_name(status));
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfDeviceMemory(message);
  throw CudaFailure(message);
}

}  // namespace gpuscale::calib
