#include "topologies/core/shipped_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "topologies/core/config_reader.hpp"

namespace gpuscale {
namespace fs = std::filesystem;
namespace {

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml");
}

// A folder holding shipped files as the source tree lays them out (a build folder has
// topologies/ and workloads/ too, CMake's, but neither of these).
bool holds_shipped_files(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "topologies" / "gpus", ec) &&
         fs::is_directory(dir / "workloads" / "frameworks", ec);
}

std::string find_data_root() {
  if (const char* dir = std::getenv("GPUSCALE_DATA_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  std::error_code ec;
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (!ec) {
    if (const fs::path installed = exe_dir.parent_path() / "share" / "gpuscale";
        holds_shipped_files(installed)) {
      return installed.string();
    }
    if (holds_shipped_files(exe_dir.parent_path())) return exe_dir.parent_path().string();
  }
  return GPUSCALE_SOURCE_DIR;
}

// Set once by resolve_only_inside_the_data_tree(), before any thread starts.
bool g_inside_the_data_tree_only = false;

// Whether `path` lies under `folder`, links and `..` resolved.
bool lies_under(const fs::path& path, const fs::path& folder) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  const fs::path f = fs::weakly_canonical(fs::absolute(folder), ec);
  if (ec) return false;
  const auto [f_end, p_at] = std::mismatch(f.begin(), f.end(), p.begin(), p.end());
  return f_end == f.end();
}

}  // namespace

void resolve_only_inside_the_data_tree() { g_inside_the_data_tree_only = true; }

bool is_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

std::string data_root() {
  static const std::string root = find_data_root();
  return root;
}

std::string file_or_name(const std::string& value, const std::string& folder) {
  if (!looks_like_path(value) || fs::path(value).is_absolute()) return value;
  return (fs::path(folder) / value).lexically_normal().string();
}

std::string folder_of(const Origin& origin) {
  return origin.line > 0 ? fs::path(origin.file).parent_path().string() : std::string();
}

ShippedFolder::ShippedFolder(std::string what, std::string env_var, std::string subdir)
    : what_(std::move(what)), env_var_(std::move(env_var)), subdir_(std::move(subdir)) {}

std::string ShippedFolder::dir() const {
  if (const char* dir = std::getenv(env_var_.c_str()); dir != nullptr && *dir != '\0') return dir;
  return (fs::path(data_root()) / subdir_).string();
}

std::vector<std::string> ShippedFolder::names() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir(), ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ShippedFolder::resolve(const std::string& name_or_path,
                                   const std::string& relative_to_dir,
                                   const Origin& origin) const {
  if (looks_like_path(name_or_path)) {
    fs::path p(name_or_path);
    if (p.is_relative() && !relative_to_dir.empty()) p = fs::path(relative_to_dir) / p;
    if (g_inside_the_data_tree_only && !lies_under(p, data_root()) && !lies_under(p, dir())) {
      throw ConfigError(origin.file.empty() ? Origin{name_or_path, 0} : origin,
                        fmt::format("'{}' is a path outside gpuscale's data tree, which this "
                                    "server does not read: name a shipped {} ({})",
                                    name_or_path, what_, fmt::join(names(), ", ")));
    }
    if (!is_file(p.string())) {
      // Named on the command line: the path itself is the place to blame.
      if (origin.file.empty()) throw ConfigError(Origin{p.string(), 0}, "no such file (check the path)");
      throw ConfigError(origin, fmt::format("no {} file '{}' (check the path)", what_, p.string()));
    }
    return p.lexically_normal().string();
  }
  const fs::path shipped = fs::path(dir()) / (name_or_path + ".yaml");
  if (is_file(shipped.string())) return shipped.string();
  throw ConfigError(origin, unknown_name_message(what_, name_or_path, names()) +
                                ", or give the path of a .yaml file");
}

}  // namespace gpuscale
