// Long options the chosen subcommand does not take, found before CLI11 parses the command line:
// CLI11 would otherwise hand a mistyped `--gpu 8` to the positional argument and report
// "experiment: File does not exist: 8", which names neither the flag nor the fix.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscale::cli {

// Throws ConfigError "gpuscale run: unknown option '--gpu' (did you mean '--gpus'?)" for the
// first `--name` or `--name=value` in argv (before any `--`) that the subcommand it follows
// does not define.
void check_long_options(const CLI::App& app, int argc, const char* const* argv);

}  // namespace gpuscale::cli
