// `gpuscale topo list` and `gpuscale topo show`: the machines gpuscale models.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

// Registers the `topo` subcommands on the app.
void add_topo_commands(CLI::App& app);

}  // namespace gpuscale::cli
