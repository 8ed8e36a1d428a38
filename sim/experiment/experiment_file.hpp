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
// Relative `topology`, `workload`, `framework` and `profile` paths are taken from the file's
// folder. What the file names is looked up as it is read (and the machine loaded with the `set:`
// overrides), so an error names the line at fault before anything runs.
#pragma once

#include <string>

#include "sim/experiment/experiment.hpp"
#include "topologies/core/config_tree.hpp"

namespace gpuscale::sim {

// Throws ConfigError (file, line, what to fix) for unknown keys and bad values.
Experiment read_experiment(const ConfigNode& root, const std::string& folder);
Experiment load_experiment_file(const std::string& path);

}  // namespace gpuscale::sim
