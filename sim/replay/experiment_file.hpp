// An experiment written in YAML, for `gpuscale run FILE`: the same settings as `gpuscale run`'s
// flags, under the flags' names (docs/experiments.md). A list key also takes one scalar.
//
//   topology: dgx1-v100
//   set: ["link_kinds.nvlink.lane_bandwidth=50GB/s"]   # overrides of the machine
//   workload: [lenet, resnet-50]
//   gpus: [1, 2, 4, 8]
//   batch: 16
//   comm: [p2p, nccl_reduce_bcast]
//
// Relative `topology` and `profile` paths are taken from the file's folder.
#pragma once

#include <string>

#include "sim/core/config_tree.hpp"
#include "sim/replay/experiment.hpp"

namespace gpuscale::sim {

// A path relative to `folder` (the file that names it), unless `value` names a shipped file.
std::string file_or_name(const std::string& value, const std::string& folder);

// Throws ConfigError (file, line, what to fix) for unknown keys and bad values.
Experiment read_experiment(const ConfigNode& root, const std::string& folder);
Experiment load_experiment_file(const std::string& path);

}  // namespace gpuscale::sim
