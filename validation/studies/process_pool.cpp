#include "validation/studies/process_pool.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <vector>

#include "sim/engine/isolated.hpp"

namespace gpuscale::sweep {
namespace {

struct Running {
  size_t task;
  sim::IsolatedChild child;
  std::string written;
};

// Reads what is waiting on a child's pipe; true once the child has closed it.
bool drain(Running& r) {
  char buffer[65536];
  const ssize_t n = ::read(r.child.fd, buffer, sizeof buffer);
  if (n > 0) r.written.append(buffer, static_cast<size_t>(n));
  return n <= 0;
}

}  // namespace

void run_in_processes(size_t count, int jobs, const std::function<std::string(size_t)>& work,
                      const std::function<void(size_t, const std::string&)>& done) {
  std::vector<Running> running;
  std::exception_ptr first_error;
  size_t next = 0;
  const size_t width = static_cast<size_t>(std::max(1, jobs));
  while (next < count || !running.empty()) {
    while (!first_error && next < count && running.size() < width) {
      const size_t task = next++;
      running.push_back({task, sim::start_isolated([&work, task] { return work(task); }), {}});
    }
    std::vector<pollfd> fds;
    for (const Running& r : running) fds.push_back({r.child.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;  // interrupted by a signal: poll again
    for (size_t i = running.size(); i-- > 0;) {
      if (fds[i].revents == 0 || !drain(running[i])) continue;
      const Running finished = std::move(running[i]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      try {
        done(finished.task, sim::finish_isolated(finished.child, finished.written));
      } catch (...) {
        if (!first_error) first_error = std::current_exception();
      }
    }
    if (first_error && next < count) next = count;  // start nothing more
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace gpuscale::sweep
