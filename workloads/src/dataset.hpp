// Training datasets: how many samples make one epoch (workloads/datasets/NAME.yaml).
#pragma once

#include <string>

#include "sim/core/shipped_files.hpp"

namespace gpuscale::wl {

struct Dataset {
  std::string name;
  std::string description;
  long samples = 0;  // samples in one epoch
};

// The shipped datasets: workloads/datasets/*.yaml, or $GPUSCALE_DATASETS_DIR if set.
const ShippedFolder& shipped_datasets();

// A shipped dataset name or a .yaml file.
Dataset load_dataset(const std::string& name_or_path);

}  // namespace gpuscale::wl
