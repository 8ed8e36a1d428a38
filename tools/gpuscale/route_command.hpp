// `gpuscale topo route`: the route a copy between two GPUs takes, hop by hop, and what a copy
// costs, simulated and in closed form.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

// Registers `route` on the `topo` subcommand.
void add_route_command(CLI::App& topo);

}  // namespace gpuscale::cli
