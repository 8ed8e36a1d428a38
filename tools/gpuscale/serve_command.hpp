// `gpuscale serve`: the page for what-if studies and teaching (docs/serve.md), on 127.0.0.1:8080
// unless told otherwise.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

void add_serve_command(CLI::App& app);

}  // namespace gpuscale::cli
