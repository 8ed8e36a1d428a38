// Turning CUDA, cuDNN and cuBLAS status codes into exceptions that say which call failed and why.
// An allocation that does not fit is its own exception: the tool records it (that batch size
// does not fit on this GPU) instead of failing.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <stdexcept>
#include <string>

namespace gpuscale::calib {

// A CUDA/cuDNN/cuBLAS call failed: "cudnnConvolutionForward: CUDNN_STATUS_BAD_PARAM".
class CudaFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device ran out of memory (cudaMalloc, or a library allocating its own).
class OutOfDeviceMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check_cuda(cudaError_t status, const char* call);
void check_cudnn(cudnnStatus_t status, const char* call);
void check_cublas(cublasStatus_t status, const char* call);

}  // namespace gpuscale::calib

#define GS_CUDA(call) ::gpuscale::calib::check_cuda((call), #call)
#define GS_CUDNN(call) ::gpuscale::calib::check_cudnn((call), #call)
#define GS_CUBLAS(call) ::gpuscale::calib::check_cublas((call), #call)
