// gpuscale: predicts how DNN training scales across GPUs and interconnects.
// The executable only parses the command line; the core library does the work. Exit status:
// 0 success, 2 bad input (the one-line message names the file, line and fix), 1 our bug.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "tools/gpuscale/collective_command.hpp"
#include "tools/gpuscale/console.hpp"
#include "tools/gpuscale/fit_command.hpp"
#include "tools/gpuscale/replay_trace_command.hpp"
#include "tools/gpuscale/run_command.hpp"
#include "tools/gpuscale/serve_command.hpp"
#include "tools/gpuscale/sweep_command.hpp"
#include "tools/gpuscale/topo_command.hpp"
#include "tools/gpuscale/train_command.hpp"
#include "tools/gpuscale/unknown_options.hpp"
#include "tools/gpuscale/validate_command.hpp"
#include "tools/gpuscale/workload_command.hpp"
#include "topologies/core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gpuscale: simulate data-parallel DNN training on multi-GPU machines"};
  app.set_version_flag("--version", "gpuscale 0.1.0");
  app.require_subcommand(1);
  gpuscale::cli::add_topo_commands(app);
  gpuscale::cli::add_workload_commands(app);
  gpuscale::cli::add_run_command(app);
  gpuscale::cli::add_collective_command(app);
  gpuscale::cli::add_train_command(app);
  gpuscale::cli::add_replay_trace_command(app);
  gpuscale::cli::add_validate_command(app);
  gpuscale::cli::add_fit_command(app);
  gpuscale::cli::add_sweep_command(app);
  gpuscale::cli::add_serve_command(app);
  gpuscale::cli::init_console();
  try {
    gpuscale::cli::check_long_options(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gpuscale: " << e.what() << " (see gpuscale --help)\n";
    return 2;
  } catch (const gpuscale::ConfigError& e) {
    std::cerr << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    // Not the input's fault but ours (docs/hardening.md): the input is what reproduces it.
    std::cerr << "gpuscale: internal error (please report it with the command and its input "
                 "files attached): "
              << e.what() << '\n';
    return 1;
  }
  return 0;
}
