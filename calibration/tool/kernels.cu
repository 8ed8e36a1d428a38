#include "calibration/tool/kernels.hpp"

#include <cuda_fp16.h>

namespace gpuscale::calib {
namespace {

constexpr int kThreads = 256;

int blocks_for(std::size_t elements) {
  const std::size_t blocks = (elements + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 32 ? blocks : 65535 * 32);
}

__global__ void empty_kernel() {}

template <typename T>
__device__ T from_float(float v);
template <>
__device__ float from_float<float>(float v) { return v; }
template <>
__device__ __half from_float<__half>(float v) { return __float2half(v); }

template <typename T>
__global__ void fill_kernel(T* data, std::size_t elements, unsigned seed) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < elements;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 2246822519u;
    h ^= h >> 13;
    data[i] = from_float<T>(static_cast<float>(h & 0xffff) / 65536.0f - 0.5f);
  }
}

// Index of element (n, c, y, x) of the large (shuffled) tensor in the small one, and back.
template <typename T>
__global__ void pixel_shuffle_kernel(const T* in, T* out, long n, long c, long h, long w, int r,
                                     bool backward) {
  const long big_h = h * r, big_w = w * r;
  const long total = n * c * big_h * big_w;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    const long x = i % big_w, y = (i / big_w) % big_h, ch = (i / (big_w * big_h)) % c,
               b = i / (big_w * big_h * c);
    const long small = ((b * c * r * r + ch * r * r + (y % r) * r + (x % r)) * h + y / r) * w +
                       x / r;
    if (backward) {
      out[small] = in[i];
    } else {
      out[i] = in[small];
    }
  }
}

template <typename T>
__global__ void upsample_forward_kernel(const T* in, T* out, long planes, long h, long w, int r) {
  const long big_h = h * r, big_w = w * r, total = planes * big_h * big_w;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    const long x = i % big_w, y = (i / big_w) % big_h, p = i / (big_w * big_h);
    out[i] = in[(p * h + y / r) * w + x / r];
  }
}

template <typename T>
__global__ void upsample_backward_kernel(const T* grad_out, T* grad_in, long planes, long h,
                                         long w, int r) {
  const long total = planes * h * w, big_w = w * r;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    const long x = i % w, y = (i / w) % h, p = i / (w * h);
    float sum = 0;
    for (int dy = 0; dy < r; ++dy) {
      for (int dx = 0; dx < r; ++dx) {
        sum += static_cast<float>(grad_out[(p * h * r + y * r + dy) * big_w + x * r + dx]);
      }
    }
    grad_in[i] = from_float<T>(sum);
  }
}

}  // namespace

void launch_empty_kernel(cudaStream_t stream) { empty_kernel<<<1, 1, 0, stream>>>(); }

void fill_random(void* data, std::size_t elements, bool half, unsigned seed,
                 cudaStream_t stream) {
  if (elements == 0) return;
  if (half) {
    fill_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(static_cast<__half*>(data),
                                                               elements, seed);
  } else {
    fill_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(static_cast<float*>(data),
                                                               elements, seed);
  }
}

void pixel_shuffle(const void* in, void* out, long n, long out_channels, long height, long width,
                   int factor, bool half, bool backward, cudaStream_t stream) {
  const std::size_t total =
      static_cast<std::size_t>(n * out_channels * height * width) * factor * factor;
  if (half) {
    pixel_shuffle_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const __half*>(in), static_cast<__half*>(out), n, out_channels, height,
        width, factor, backward);
  } else {
    pixel_shuffle_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const float*>(in), static_cast<float*>(out), n, out_channels, height, width,
        factor, backward);
  }
}

void upsample_nearest(const void* in, void* out, long n, long channels, long height, long width,
                      int factor, bool half, bool backward, cudaStream_t stream) {
  const long planes = n * channels;
  const std::size_t total = static_cast<std::size_t>(planes * height * width) *
                            (backward ? 1 : factor * factor);
  if (half) {
    if (backward) {
      upsample_backward_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
          static_cast<const __half*>(in), static_cast<__half*>(out), planes, height, width,
          factor);
    } else {
      upsample_forward_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
          static_cast<const __half*>(in), static_cast<__half*>(out), planes, height, width,
          factor);
    }
  } else if (backward) {
    upsample_backward_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const float*>(in), static_cast<float*>(out), planes, height, width, factor);
  } else {
    upsample_forward_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const float*>(in), static_cast<float*>(out), planes, height, width, factor);
  }
}

}  // namespace gpuscale::calib
