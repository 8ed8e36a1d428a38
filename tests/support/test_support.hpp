// Small helpers shared by the test suites.
#pragma once

#include <string>

#include "sim/core/error.hpp"

namespace gpuscale::testing {

// Writes `text` to a fresh file named `name` in a per-process temporary folder; returns its path.
std::string write_temp_file(const std::string& name, const std::string& text);

// A shipped framework file (workloads/frameworks/FRAMEWORK.yaml) with the value of one
// indented key (a host cost, ...) replaced, written by write_temp_file; returns its path.
std::string framework_file_with(const std::string& key, const std::string& value,
                                const std::string& framework = "mxnet");

// Runs a shell command; returns its exit status and what it printed on stdout and stderr.
struct CommandResult {
  int status = 0;
  std::string out;
  std::string err;
};
CommandResult run_command(const std::string& command);

// The message of the ConfigError `f` throws, or a failure message if it throws none.
template <typename F>
std::string config_error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no ConfigError thrown>";
}

}  // namespace gpuscale::testing
