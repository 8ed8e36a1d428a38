// `gpuscale workload list|show|layers`: the shipped models, one model's layers, costs and memory,
// and its predicted kernel time per layer and pass (layer_times_command.hpp).
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

void add_workload_commands(CLI::App& app);

}  // namespace gpuscale::cli
