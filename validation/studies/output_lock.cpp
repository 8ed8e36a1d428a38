#include "validation/studies/output_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "topologies/core/error.hpp"
#include "topologies/core/output_file.hpp"

namespace gpuscale::sweep {
namespace {

// The pid the lock's holder wrote into it, or "" when it has not written it yet.
std::string holder_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string pid(text, n > 0 ? static_cast<size_t>(n) : 0);
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  return pid;
}

}  // namespace

OutputFolderLock::OutputFolderLock(const std::string& dir) {
  const Origin origin{"--out " + dir, 0};
  create_output_folder(dir, Origin{"--out", 0});
  const std::string path = (std::filesystem::path(dir) / ".lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int error = errno;
    throw ConfigError(origin, fmt::format("cannot create '{}' ({}): make the folder writable, or "
                                          "choose another --out", path,
                                          std::generic_category().message(error)));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string pid = error == EWOULDBLOCK ? holder_pid(fd_) : "";
    ::close(fd_);
    if (error != EWOULDBLOCK) {
      throw ConfigError(origin, fmt::format("cannot lock '{}' ({}): choose another --out", path,
                                            std::generic_category().message(error)));
    }
    throw ConfigError(origin, fmt::format("another gpuscale sweep{} is writing into this folder; "
                                          "wait for it or choose another --out",
                                          pid.empty() ? "" : " (pid " + pid + ")"));
  }
  // Only for the message above: the lock holds whether or not the pid could be written.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(fd_, pid.data(), pid.size(), 0);
  }
}

OutputFolderLock::~OutputFolderLock() { ::close(fd_); }

}  // namespace gpuscale::sweep
