// `gpuscale workload list|show`: the shipped models, and one model's layers, costs and memory.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

void add_workload_commands(CLI::App& app);

}  // namespace gpuscale::cli
