// Output files written whole or not at all: a run that fails half-way leaves no truncated
// trace or figure behind for a user to mistake for a result.
#pragma once

#include <string>

#include "sim/core/error.hpp"

namespace gpuscale {

// Writes `text` to `path` through a temporary file renamed over it. Throws ConfigError at
// `origin` (the option that named the file) when the file cannot be written.
void write_output_file(const std::string& path, const std::string& text, const Origin& origin);

// Creates `dir` and its parents if missing. Throws ConfigError at `origin` when it cannot.
void create_output_folder(const std::string& dir, const Origin& origin);

}  // namespace gpuscale
