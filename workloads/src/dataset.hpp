// Training datasets: how many samples make one epoch (workloads/datasets/NAME.yaml).
#pragma once

#include <string>

#include "sim/core/shipped_files.hpp"
#include "sim/core/units.hpp"

namespace gpuscale::wl {

struct Dataset {
  std::string name;
  std::string description;
  long samples = 0;  // samples in one epoch
  // What one CPU core takes to turn a stored sample into a training sample (decode, resize,
  // crop, flip, normalise), measured on a core of clock `decode_clock`; 0 for generated data.
  Seconds decode_per_sample;
  Hertz decode_clock;

  // The decode time on a core of `clock` (0: the measured core's): carried by the clock ratio,
  // the rule tools/bench/README.md (bench_decode) states with its uncertainty.
  Seconds decode_time_on(Hertz clock) const;
};

// The shipped datasets: workloads/datasets/*.yaml, or $GPUSCALE_DATASETS_DIR if set.
const ShippedFolder& shipped_datasets();

// A shipped dataset name or a .yaml file.
Dataset load_dataset(const std::string& name_or_path);

}  // namespace gpuscale::wl
