#include "topologies/core/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace gpuscale {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPartial = ".partial";

std::string advice(int error) {
  switch (error) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return "free some space, or choose another folder";
    case EACCES:
    case EPERM:
    case EROFS:
      return "make the folder writable, or choose another";
    case EISDIR:
      return "a folder has its name: move it away, or choose another folder";
    default:
      return "check the folder exists and is writable";
  }
}

[[noreturn]] void cannot_write(const std::string& path, int error, const Origin& origin) {
  throw ConfigError(origin, fmt::format("cannot write '{}' ({}): {}", path,
                                        std::generic_category().message(error), advice(error)));
}

// Writes all of `text` into a new file at `path`; returns 0, or the errno of the first failure.
int write_new_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return errno;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::close(fd);
      return error;
    }
    done += static_cast<size_t>(n);
  }
  // Network file systems and quotas may report a failed write only when the file is closed.
  return ::close(fd) == 0 ? 0 : errno;
}

// Whether `name` is a temporary file of write_output_file whose process is gone.
bool is_stale_partial(std::string_view name) {
  const size_t at = name.rfind(kPartial);
  if (at == std::string_view::npos || at == 0) return false;
  const std::string_view writer = name.substr(at + kPartial.size());  // "" or ".PID"
  if (writer.empty()) return true;  // the form before temporary files carried their writer
  if (writer[0] != '.') return false;
  pid_t pid = 0;
  const char* last = writer.data() + writer.size();
  const auto [end, error] = std::from_chars(writer.data() + 1, last, pid);
  if (error != std::errc{} || end != last || pid <= 0) return false;  // not one of ours
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

void write_output_file(const std::string& path, const std::string& text, const Origin& origin) {
  const std::string partial = fmt::format("{}{}.{}", path, kPartial, ::getpid());
  if (const int error = write_new_file(partial, text); error != 0) {
    ::unlink(partial.c_str());
    cannot_write(path, error, origin);
  }
  if (::rename(partial.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(partial.c_str());
    cannot_write(path, error, origin);
  }
}

void remove_stale_partial_files(const std::string& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ignored;  // one left behind harms nothing: no reader takes it for a result
    if (is_stale_partial(it->path().filename().string())) fs::remove(it->path(), ignored);
  }
}

void create_output_folder(const std::string& dir, const Origin& origin) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw ConfigError(origin, fmt::format("cannot create folder '{}' ({}): choose another", dir,
                                          ec.message()));
  }
}

}  // namespace gpuscale
