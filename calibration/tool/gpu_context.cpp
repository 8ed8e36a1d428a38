#include "calibration/tool/gpu_context.hpp"

#include <fmt/format.h>

#include <utility>

#include "calibration/tool/cuda_status.hpp"
#include "calibration/tool/kernels.hpp"

namespace gpuscale::calib {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t status = cudaMalloc(&data_, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    data_ = nullptr;
    throw OutOfDeviceMemory(fmt::format("cudaMalloc of {:.3f} GB: out of device memory",
                                        static_cast<double>(bytes) / 1e9));
  }
  GS_CUDA(status);
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

GpuContext::GpuContext(int device, compute::Precision precision)
    : device_(device), element_{precision} {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    throw CudaFailure(fmt::format("no CUDA GPU found ({}): gpuscale-calibrate measures on a GPU; "
                                  "run it on a machine that has one",
                                  status == cudaSuccess ? "cudaGetDeviceCount: 0 devices"
                                                        : cudaGetErrorString(status)));
  }
  if (device < 0 || device >= count) {
    throw CudaFailure(fmt::format("--device {}: this machine has GPUs 0 to {}", device,
                                  count - 1));
  }
  GS_CUDA(cudaSetDevice(device));
  GS_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  GS_CUDNN(cudnnCreate(&cudnn_));
  GS_CUDNN(cudnnSetStream(cudnn_, stream_));
  GS_CUBLAS(cublasCreate(&cublas_));
  GS_CUBLAS(cublasSetStream(cublas_, stream_));
  // FP32 GEMMs in true FP32, as on a V100; FP16 ones may use Tensor Cores.
  GS_CUBLAS(cublasSetMathMode(cublas_, element_.half() ? CUBLAS_DEFAULT_MATH
                                                       : CUBLAS_PEDANTIC_MATH));
}

GpuContext::~GpuContext() {
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (cudnn_ != nullptr) cudnnDestroy(cudnn_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

DeviceBuffer GpuContext::tensor(std::size_t elements) {
  DeviceBuffer buffer(elements * element_.bytes());
  fill_random(buffer.get(), elements, element_.half(), next_seed_++, stream_);
  return buffer;
}

DeviceBuffer GpuContext::float_tensor(std::size_t elements) {
  DeviceBuffer buffer(elements * sizeof(float));
  fill_random(buffer.get(), elements, false, next_seed_++, stream_);
  return buffer;
}

void GpuContext::synchronize() const { GS_CUDA(cudaStreamSynchronize(stream_)); }

TensorDesc::TensorDesc(cudnnDataType_t type, long n, long c, long h, long w) {
  GS_CUDNN(cudnnCreateTensorDescriptor(&desc_));
  GS_CUDNN(cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, type, static_cast<int>(n),
                                      static_cast<int>(c), static_cast<int>(h),
                                      static_cast<int>(w)));
}

TensorDesc::~TensorDesc() {
  if (desc_ != nullptr) cudnnDestroyTensorDescriptor(desc_);
}

}  // namespace gpuscale::calib
