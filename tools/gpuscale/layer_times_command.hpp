// `gpuscale workload layers`: the predicted GPU time of each pass of each layer, with the
// convolution algorithm the model chose, named as the workload file names the layers, so that a
// user can set them beside a profiler's per-layer times.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

// Registers `layers` on the `workload` subcommand.
void add_layer_times_command(CLI::App& workload);

}  // namespace gpuscale::cli
