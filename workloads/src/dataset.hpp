// Training datasets: how many samples make one epoch (workloads/datasets/NAME.yaml).
#pragma once

#include <optional>
#include <string>

#include "topologies/core/shipped_files.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::wl {

// What one CPU core takes per sample, stated for a core of the CPU whose base clock is `clock`.
struct CoreTime {
  Seconds per_sample;
  Hertz clock;

  // The time on a core of a CPU with base clock `cpu_clock` (0: the stated CPU's), carried by the
  // ratio of base clocks; how a measurement on another microarchitecture becomes the stated
  // figure is tools/bench/README.md's rule (bench_decode), with its uncertainty.
  Seconds on(Hertz cpu_clock) const;
};

// A stored image as a GPU decoder (DALI's "mixed" nvJPEG decoder) takes it: the Huffman decode
// left on a CPU thread, and what the GPU reads and writes (sim/compute/decode_kernels.hpp).
struct GpuDecodeWork {
  CoreTime host;
  double pixels = 0;   // a stored image's mean pixels: the RGB image the GPU's IDCT writes
  Bytes coefficients;  // its DCT coefficients, int16 each: copied to the GPU, read by the IDCT
};

struct Dataset {
  std::string name;
  std::string description;
  long samples = 0;  // samples in one epoch
  std::string unit = "samples";  // what a sample is, plural ("images", "sentence pairs")
  // What one CPU core takes to turn a stored sample into a training sample (decode, resize,
  // crop, flip, normalise); 0 for generated data.
  CoreTime decode;
  // The same samples decoded on the GPU; absent where the dataset has no JPEGs to decode.
  std::optional<GpuDecodeWork> gpu_decode;
};

// The shipped datasets: workloads/datasets/*.yaml, or $GPUSCALE_DATASETS_DIR if set.
const ShippedFolder& shipped_datasets();

// A shipped dataset name or a .yaml file.
Dataset load_dataset(const std::string& name_or_path);

}  // namespace gpuscale::wl
