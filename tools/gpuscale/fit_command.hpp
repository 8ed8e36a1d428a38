// `gpuscale fit`: fit a framework's (B) host costs on its declared calibration set and write
// them, with their provenance, into the framework file (validation/src/fit.hpp, docs/validation.md).
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

void add_fit_command(CLI::App& app);

}  // namespace gpuscale::cli
