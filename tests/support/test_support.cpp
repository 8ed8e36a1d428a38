#include "tests/support/test_support.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <utility>
#include <sys/wait.h>

#include "workloads/src/framework.hpp"

namespace gpuscale::testing {

std::string write_temp_file(const std::string& name, const std::string& text) {
  // Inside the build tree, so that test runs leave nothing behind elsewhere.
  const auto dir = std::filesystem::path(GPUSCALE_TEST_TMPDIR) / std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string temp_prefix(const std::string& name) {
  const std::string marker = write_temp_file(name + ".marker", "");
  return marker.substr(0, marker.size() - std::string(".marker").size());
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string framework_file_with(const std::string& key, const std::string& value,
                                const std::string& framework) {
  const wl::FrameworkConfig shipped = wl::load_framework(framework);
  std::ifstream in(shipped.file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = std::regex_replace(text, std::regex("\n  " + key + ": [^\n]*"),
                            "\n  " + key + ": " + value);
  return write_temp_file(framework + "-" + key + ".yaml", text);
}

CommandResult run_command(const std::string& command) {
  const std::string err_path = write_temp_file("stderr.txt", "");
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>" + err_path).c_str(), "r");
  if (pipe == nullptr) return {-1, "", "popen failed"};
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  result.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  return result;
}

ScopedEnv::ScopedEnv(std::string name) : name_(std::move(name)) {
  if (const char* value = std::getenv(name_.c_str())) former_ = value;
}

ScopedEnv::~ScopedEnv() {
  if (former_) {
    ::setenv(name_.c_str(), former_->c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

}  // namespace gpuscale::testing
