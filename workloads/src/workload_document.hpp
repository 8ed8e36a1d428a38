// The document stage of loading a workload (docs/workload-schema.md): a file found by name or
// path, with its `base:` chain merged key by key, and `--set` overrides applied. The result is
// one ConfigNode whose values still know their file and line; workload_loader reads it.
#pragma once

#include <string>
#include <vector>

#include "topologies/core/config_tree.hpp"
#include "topologies/core/shipped_files.hpp"

namespace gpuscale::wl {

// The shipped models: workloads/*.yaml, or $GPUSCALE_WORKLOADS_DIR if set.
const ShippedFolder& shipped_workloads();

// The file of a model (a shipped name or a path) with its base chain resolved and `overrides`
// ("args.doublings=2") applied.
ConfigNode load_workload_document(const std::string& name_or_path,
                                  const std::vector<std::string>& overrides);

}  // namespace gpuscale::wl
