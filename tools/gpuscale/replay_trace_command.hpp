// `gpuscale replay-trace`: an iteration written for another simulator (an ASTRA-sim 1.0 text
// workload, or a Chakra execution trace as ASTRA-sim 2 reads it) replayed on a gpuscale machine,
// with its compute and exposed communication; `--export-chakra` writes the iteration as a Chakra
// trace (docs/interop.md).
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

void add_replay_trace_command(CLI::App& app);

}  // namespace gpuscale::cli
