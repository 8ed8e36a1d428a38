// Runs a function in a child process and returns what it printed: SimGrid allows one engine per
// process, and an experiment simulates many configurations. A ConfigError in the child comes back
// as a ConfigError with the same one-line message; any other failure as std::runtime_error.
#pragma once

#include <functional>
#include <string>

namespace gpuscale::sim {

std::string run_isolated(const std::function<std::string()>& work);

}  // namespace gpuscale::sim
