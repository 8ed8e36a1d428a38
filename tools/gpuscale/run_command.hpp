// `gpuscale run`: simulate training on a machine and print time per iteration and epoch,
// speedup, the FP+BP / WU breakdown, memory and link utilisation.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

void add_run_command(CLI::App& app);

}  // namespace gpuscale::cli
