// Runs many simulations at once, each in a child process of its own (SimGrid allows one engine
// per process; sim/engine/isolated.hpp), at most `jobs` at a time, on the machine's cores.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace gpuscale::sweep {

// Runs work(i) for every i in [0, count) in child processes and calls done(i, result) in this
// process as each finishes, in completion order. When a task throws, no further task starts; the
// running ones finish (and are passed to `done`), then the first exception is rethrown here.
void run_in_processes(size_t count, int jobs, const std::function<std::string(size_t)>& work,
                      const std::function<void(size_t, const std::string&)>& done);

}  // namespace gpuscale::sweep
