// The shape every loader fuzz target shares (libFuzzer, built with -DGPUSCALE_FUZZ=ON and Clang:
// docs/hardening.md). The input's bytes become a file in a folder of this process's own, the
// loader reads it as a user's file, and a ConfigError is the right answer to bad bytes. Anything
// else escaping (std::bad_alloc, std::out_of_range, a filesystem error), a crash, a sanitizer
// report or a hang is a bug: libFuzzer stops and keeps the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "topologies/core/error.hpp"

namespace gpuscale::fuzz {

// A folder for this process's inputs, made once and removed when the process ends.
inline const std::filesystem::path& scratch_folder() {
  struct Folder {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("gpuscale-fuzz-" + std::to_string(::getpid()));
    Folder() { std::filesystem::create_directories(path); }
    ~Folder() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Folder folder;
  return folder.path;
}

// Writes the input to `name` in the scratch folder and returns its path.
inline std::string write_input(const std::uint8_t* data, std::size_t size,
                               const std::string& name) {
  const std::string path = (scratch_folder() / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// Runs `load` and accepts a ConfigError as its answer.
template <typename Load>
int expect_answer(Load&& load) {
  try {
    load();
  } catch (const ConfigError&) {
  }
  return 0;
}

}  // namespace gpuscale::fuzz
