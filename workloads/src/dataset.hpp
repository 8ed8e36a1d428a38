// Training datasets: how many samples make one epoch (workloads/datasets/NAME.yaml).
#pragma once

#include <string>

#include "topologies/core/shipped_files.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::wl {

struct Dataset {
  std::string name;
  std::string description;
  long samples = 0;  // samples in one epoch
  std::string unit = "samples";  // what a sample is, plural ("images", "sentence pairs")
  // What one CPU core takes to turn a stored sample into a training sample (decode, resize,
  // crop, flip, normalise) on a core of the CPU whose base clock is `decode_clock`; 0 for
  // generated data.
  Seconds decode_per_sample;
  Hertz decode_clock;

  // The decode time on a core of a CPU with base clock `clock` (0: the stated CPU's), carried by
  // the ratio of base clocks; how a measurement on another microarchitecture becomes the stated
  // figure is tools/bench/README.md's rule (bench_decode), with its uncertainty.
  Seconds decode_time_on(Hertz clock) const;
};

// The shipped datasets: workloads/datasets/*.yaml, or $GPUSCALE_DATASETS_DIR if set.
const ShippedFolder& shipped_datasets();

// A shipped dataset name or a .yaml file.
Dataset load_dataset(const std::string& name_or_path);

}  // namespace gpuscale::wl
