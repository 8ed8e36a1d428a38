// Figures as files: their names, and a folder of them written in one go (`--plot DIR` of
// `gpuscale validate` and `gpuscale sweep`).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpuscale::report {

using Figure = std::pair<std::string, std::string>;  // file name, SVG

// Creates `dir` if missing and writes each figure into it, whole or not at all (output_file.hpp);
// returns their paths in order. Throws ConfigError (--plot) when the folder or a file cannot be
// written.
std::vector<std::string> write_figures(const std::string& dir, const std::vector<Figure>& figures);

// "Inception-v3, batch 32" -> "inception-v3-batch-32": a file name's part.
std::string file_slug(const std::string& text);

}  // namespace gpuscale::report
