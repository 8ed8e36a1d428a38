// The GPU's share of a GPU image decoder (DALI's "mixed" nvJPEG decoder and its GPU operators):
// the kernels that turn one GPU's batch of Huffman-decoded JPEGs into training samples, timed by
// the analytic roofline (kernel_time.hpp) as streaming kernels:
//
//   per image:  IDCT and colour conversion (nvJPEG decodes image by image on its threads'
//               streams): reads the coefficients, writes the RGB image (3 bytes a pixel);
//               32 FLOPs per coefficient (two passes of 8 multiply-adds per output of an 8x8
//               block);
//   per batch:  resize of each image's random crop to the sample (bilinear: reads at most the
//               whole RGB image, writes the 8-bit sample, 8 FLOPs per output element), then
//               crop-mirror-normalise (reads the 8-bit sample, writes it as float32, 2 FLOPs per
//               element).
//
// One kernel per stage is a floor: what nvJPEG launches inside a decode call is not published [?].
// docs/gpu-input-pipeline-sources.md has the sources and the bounds the result is checked
// against.
#pragma once

#include <vector>

#include "sim/compute/kernel_time.hpp"

namespace gpuscale::compute {

struct StoredImage {
  double pixels = 0;             // the decoded RGB image's pixels
  double coefficient_bytes = 0;  // its DCT coefficients as the host copies them
};

// The kernels of one GPU's batch of `batch` images into samples of `sample_elements` (3x224x224).
std::vector<KernelWork> gpu_decode_kernels(const StoredImage& image, double sample_elements,
                                           int batch);

// Their time on `gpu`, one after another.
Seconds gpu_decode_time(const GpuSpec& gpu, const AnalyticParams& params, const StoredImage& image,
                        double sample_elements, int batch);

}  // namespace gpuscale::compute
