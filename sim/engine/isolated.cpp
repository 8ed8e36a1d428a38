#include "sim/engine/isolated.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <stdexcept>

#include "topologies/core/error.hpp"

namespace gpuscale::sim {
namespace {

// The child's first byte says how the rest reads.
constexpr char kResult = 'R';
constexpr char kConfigError = 'C';
constexpr char kFailure = 'F';

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

IsolatedChild start_isolated(const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("run_isolated: pipe failed");
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("run_isolated: fork failed");
  if (pid == 0) {
    // A simulation outlives no gpuscale: killed with its parent (a timeout, a kill), it would
    // go on for nobody, minutes long for the largest configurations.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the parent died before prctl took effect
    ::close(fds[0]);
    std::string out;
    try {
      out = kResult + work();
    } catch (const ConfigError& e) {
      out = kConfigError + std::string(e.what());
    } catch (const std::exception& e) {
      out = kFailure + std::string(e.what());
    }
    write_all(fds[1], out);
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

std::string finish_isolated(const IsolatedChild& child, const std::string& written) {
  ::close(child.fd);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  if (written.empty()) throw std::runtime_error("simulation process died (signal or crash)");
  const std::string body = written.substr(1);
  if (written[0] == kConfigError) throw ConfigError({}, body);
  if (written[0] == kFailure) throw std::runtime_error(body);
  return body;
}

std::string run_isolated(const std::function<std::string()>& work) {
  const IsolatedChild child = start_isolated(work);
  std::string text;
  char buffer[65536];
  ssize_t n = 0;
  while ((n = ::read(child.fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  return finish_isolated(child, text);
}

}  // namespace gpuscale::sim
