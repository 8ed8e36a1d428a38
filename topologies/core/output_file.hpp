// Output files written whole or not at all: a run that fails half-way, or is killed, leaves no
// truncated trace, figure or result behind for a user to mistake for a whole one.
#pragma once

#include <string>

#include "topologies/core/error.hpp"

namespace gpuscale {

// Writes `text` to `path` through a temporary file, PATH.partial.PID, renamed over it: a reader
// finds the old file or the new one, never part of one, and processes writing one path at once
// never share a temporary file. Throws ConfigError at `origin` (the option that named the file),
// naming the file, the cause and the fix (a full disk, a read-only folder), when the file cannot
// be written, closed or renamed; the temporary file is removed then.
void write_output_file(const std::string& path, const std::string& text, const Origin& origin);

// Removes the temporary files that write_output_file left in `dir` (not its subfolders) when
// its process was killed: those whose process is gone, and those of the older form PATH.partial.
void remove_stale_partial_files(const std::string& dir);

// Creates `dir` and its parents if missing. Throws ConfigError at `origin` when it cannot.
void create_output_folder(const std::string& dir, const Origin& origin);

}  // namespace gpuscale
