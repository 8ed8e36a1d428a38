// Loads a workload file into a Workload: templates and arguments expanded, every layer named,
// every shape inferred (docs/workload-schema.md). Throws ConfigError "FILE:LINE: ..." for any
// problem: unknown keys or layer types, missing fields, shapes that do not fit.
#pragma once

#include <string>
#include <vector>

#include "workloads/src/workload.hpp"

namespace gpuscale::wl {

// `name_or_path`: a shipped model ("resnet-50") or a .yaml file. `overrides` are `--set`
// assignments ("args.doublings=2") applied to the document before it is read.
Workload load_workload(const std::string& name_or_path,
                       const std::vector<std::string>& overrides = {});

// The framework `model` runs under: `asked` (a --framework) when given, else the one its file
// names as published with (`framework:`, a shipped name or a path from the file's folder), else
// mxnet (a model that names none).
std::string framework_for(const std::string& model, const std::string& asked,
                          const std::vector<std::string>& overrides = {});

// The keys a workload file may have at its top level.
const std::vector<std::string>& workload_file_keys();

}  // namespace gpuscale::wl
