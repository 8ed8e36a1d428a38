// Runs a function in a child process and returns what it printed: SimGrid allows one engine per
// process, and an experiment simulates many configurations. A ConfigError in the child comes back
// as a ConfigError with the same one-line message; any other failure as std::runtime_error.
#pragma once

#include <functional>
#include <string>

namespace gpuscale::sim {

std::string run_isolated(const std::function<std::string()>& work);

// The same in two halves, for running several children at once (sweep/process_pool.hpp): a
// child started on `work`, whose pipe the caller reads to its end before reaping the child...
struct IsolatedChild {
  int pid = -1;
  int fd = -1;  // the read end of the child's pipe
};
IsolatedChild start_isolated(const std::function<std::string()>& work);
// ...and, from everything the child wrote, its result (or its exception, rethrown). Reaps it.
std::string finish_isolated(const IsolatedChild& child, const std::string& written);

}  // namespace gpuscale::sim
