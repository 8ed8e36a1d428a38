// `gpuscale collective`: simulate one collective (allreduce, allgather, reducescatter, broadcast,
// alltoall, reduce) alone on a machine over sizes given as a list or swept as nccl-tests sweeps
// them (-b, -e, -f), and print one row per GPU count and size with nccl-tests' columns: size,
// count, type, redop, root, time, algbw and busbw.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

void add_collective_command(CLI::App& app);

}  // namespace gpuscale::cli
