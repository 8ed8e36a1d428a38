// Reads a study file (docs/sweeps.md) into its runs:
//
//   name: nvlink-matters
//   base: {workload: resnet-50, batch: 32, images: 256000}   # an experiment (docs/experiments.md)
//   axes:                                  # the cross product, first axis outermost
//     machine:
//       - c4140-k                          # a shipped machine or a .yaml file
//       - {name: dgx1-x2, topology: dgx1-v100, set: ["link_kinds.nvlink.lane_bandwidth=50GB/s"]}
//       - {name: dgx1-no-01, base: dgx1-v100, links: [{a: gpu0, b: gpu1, remove: true}]}  # inline
//     gpus: [1, 2, 4]
//     comm: [p2p, nccl]
//
// or, instead of `axes`, `runs:` a list of mappings of the same keys, each overriding `base`.
// Every value is checked when the study is read (machines are loaded, names looked up), so a bad
// study fails before anything runs, with the file and line at fault.
#pragma once

#include <string>

#include "validation/studies/study.hpp"

namespace gpuscale::sweep {

// The keys an axis (or an explicit run) may vary, in the order runs and tables list them.
const std::vector<std::string>& axis_names();

Study load_study_file(const std::string& path);

// Every run of `study` at precision `recipe` (`sweep --precision`, named at `at`). Throws
// ConfigError at `at` when the study varies the precision itself, or a run's framework lacks
// the recipe.
void set_study_precision(Study& study, const std::string& recipe, const Origin& at);

}  // namespace gpuscale::sweep
