// Small helpers shared by the test suites.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>

#include "topologies/core/error.hpp"

namespace gpuscale::testing {

// Writes `text` to a fresh file named `name` in a per-process temporary folder; returns its path.
std::string write_temp_file(const std::string& name, const std::string& text);
// A path prefix `name` in that folder, for outputs written as PREFIX.0.et, PREFIX.1.et, ...
std::string temp_prefix(const std::string& name);
// The bytes of a file ("" if it cannot be read).
std::string file_bytes(const std::string& path);

// A shipped framework file (workloads/frameworks/FRAMEWORK.yaml) with the value of one
// indented key (a host cost, ...) replaced, written by write_temp_file; returns its path.
std::string framework_file_with(const std::string& key, const std::string& value,
                                const std::string& framework = "mxnet");

// A double's bits: EXPECT_EQ(bits_of(a), bits_of(b)) checks that a value came back bit for bit
// (EXPECT_EQ on the doubles would take -0.0 for 0.0).
inline std::uint64_t bits_of(double x) { return std::bit_cast<std::uint64_t>(x); }

// Runs a shell command; returns its exit status and what it printed on stdout and stderr.
struct CommandResult {
  int status = 0;
  std::string out;
  std::string err;
};
CommandResult run_command(const std::string& command);

// Gives environment variable `name` back the value it has when the guard is made, or unsets it
// if it has none, when the guard goes out of scope: the tests of one binary share a process, so
// a variable a test sets (to point the loaders at its own files) would otherwise reach the tests
// run after it, and the commands they start.
class ScopedEnv {
 public:
  explicit ScopedEnv(std::string name);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> former_;
};

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
