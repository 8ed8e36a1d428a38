// What the sweep tests share: the executable, a fresh output folder per test, reading results.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace gpuscale::testing {

inline const std::string kGpuscale = GPUSCALE_EXECUTABLE;

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A fresh output folder per test, inside the build tree.
inline std::string out_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(GPUSCALE_TEST_TMPDIR) / "sweep" / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

}  // namespace gpuscale::testing
