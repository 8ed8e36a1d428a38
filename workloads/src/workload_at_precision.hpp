// A workload at the precision a run asks for: `--precision`, an experiment's or a study's
// `precision:`, a train suite's table. One place, so that every command reads a workload the same.
#pragma once

#include <string>
#include <vector>

#include "topologies/core/error.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::wl {

// The workload read from its file (with --set style overrides), trained at the recipe
// `precision` (named at `at`) when one is given, else at its file's own `precision:`.
Workload load_workload_at(const std::string& name_or_path, const std::string& precision,
                          const Origin& at, const std::vector<std::string>& overrides = {});

}  // namespace gpuscale::wl
