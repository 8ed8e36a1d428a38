// `gpuscale collective`: simulate one allreduce alone on a machine and print its time, algbw and
// busbw as nccl-tests does, one row per GPU count and message size.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

void add_collective_command(CLI::App& app);

}  // namespace gpuscale::cli
