// What every measurement needs: the device, one stream, cuDNN and cuBLAS handles bound to it,
// device buffers that free themselves, and the element type of the precision being measured.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <vector>

#include "sim/compute/gpu_spec.hpp"

namespace gpuscale::calib {

// A cudaMalloc'ed block; throws OutOfDeviceMemory when it does not fit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// How tensors are stored and multiplied at one precision: fp32 runs FP32 math on the CUDA cores
// (TF32 Tensor Core math is switched off, as on the V100 it is projected to); tensor stores FP16
// and accumulates in FP32 on Tensor Cores (DeepBench's "mixed" precision).
struct ElementType {
  compute::Precision precision = compute::Precision::fp32;

  bool half() const { return precision != compute::Precision::fp32; }
  std::size_t bytes() const { return half() ? 2 : 4; }
  cudnnDataType_t cudnn() const { return half() ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT; }
  cudaDataType_t cuda() const { return half() ? CUDA_R_16F : CUDA_R_32F; }
  cudnnMathType_t math() const { return half() ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH; }
};

class GpuContext {
 public:
  // Throws CudaFailure when there is no such device.
  GpuContext(int device, compute::Precision precision);
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }
  const ElementType& element() const { return element_; }

  // A buffer of `elements` of the precision's type, or of FP32 (batch-norm statistics and
  // scales stay FP32 at every precision), filled with small non-zero values.
  DeviceBuffer tensor(std::size_t elements);
  DeviceBuffer float_tensor(std::size_t elements);
  void synchronize() const;

 private:
  int device_;
  ElementType element_;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  unsigned next_seed_ = 1;
};

// cuDNN descriptors that destroy themselves.
class TensorDesc {
 public:
  TensorDesc(cudnnDataType_t type, long n, long c, long h, long w);
  ~TensorDesc();
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

}  // namespace gpuscale::calib
