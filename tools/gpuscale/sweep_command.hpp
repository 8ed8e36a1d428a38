// `gpuscale sweep STUDY.yaml`: run a study's runs in parallel, cached by content hash;
// `gpuscale sweep merge DIR...`: join the outputs of a study's shards (docs/sweeps.md).
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

void add_sweep_command(CLI::App& app);

}  // namespace gpuscale::cli
