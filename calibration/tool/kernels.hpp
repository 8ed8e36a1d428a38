// The few kernels no library offers: an empty one (to measure launch overhead), filling buffers
// with non-zero data (Tensor Cores run faster on zeros), and the EDSR layers' data movement.
// Plain C++ declarations: only kernels.cu is compiled by nvcc.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace gpuscale::calib {

void launch_empty_kernel(cudaStream_t stream);

// Values in [-0.5, 0.5) from a hash of the index and `seed`, as FP32 or FP16.
void fill_random(void* data, std::size_t elements, bool half, unsigned seed, cudaStream_t stream);

// N x (C r^2) x H x W -> N x C x (H r) x (W r), and its gradient (the inverse permutation).
void pixel_shuffle(const void* in, void* out, long n, long out_channels, long height, long width,
                   int factor, bool half, bool backward, cudaStream_t stream);

// Nearest-neighbour upsampling by `factor`; backward sums each factor x factor block.
void upsample_nearest(const void* in, void* out, long n, long channels, long height, long width,
                      int factor, bool half, bool backward, cudaStream_t stream);

}  // namespace gpuscale::calib
