// `gpuscale validate`: run a validation suite (validation/NAME) as its study ran, and print each
// measurement beside gpuscale's prediction with the error, the bounds and claims that hold, and
// the MAPE per table (docs/validation.md).
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

void add_validate_command(CLI::App& app);

}  // namespace gpuscale::cli
