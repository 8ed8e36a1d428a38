// `gpuscale train`: one iteration of a transformer trained with tensor, pipeline and data
// parallelism together (Megatron-LM's layout and 1F1B schedule) simulated on a machine, with its
// bubble, communication and memory per GPU; `--sweep` does it for every valid layout of a GPU
// count and sorts them by iteration time (docs/parallelism.md).
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

void add_train_command(CLI::App& app);

}  // namespace gpuscale::cli
