// The framework a workload trains with: the constants of the memory model
// (workloads/frameworks/NAME.yaml, docs/memory-model.md).
#pragma once

#include <string>

#include "sim/core/shipped_files.hpp"
#include "sim/core/units.hpp"

namespace gpuscale::wl {

struct FrameworkConfig {
  std::string name;
  std::string description;
  Bytes context;          // CUDA context, libraries and framework start-up, per GPU
  Bytes workspace_limit;  // the most cuDNN workspace a convolution may take
  int optimizer_state_per_param = 1;  // arrays the optimizer keeps per parameter array
  bool update_on_kvstore = true;      // the reducing GPU runs the optimizer (MXNet kvstore)
};

// The shipped frameworks: workloads/frameworks/*.yaml, or $GPUSCALE_FRAMEWORKS_DIR if set.
const ShippedFolder& shipped_frameworks();

FrameworkConfig load_framework(const std::string& name_or_path);

}  // namespace gpuscale::wl
