#include "validation/report/figure_files.hpp"

#include <cctype>
#include <filesystem>

#include "topologies/core/output_file.hpp"

namespace gpuscale::report {

std::vector<std::string> write_figures(const std::string& dir, const std::vector<Figure>& figures) {
  const Origin origin{"--plot", 0};
  create_output_folder(dir, origin);
  std::vector<std::string> paths;
  for (const auto& [name, svg] : figures) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    write_output_file(path, svg, origin);
    paths.push_back(path);
  }
  return paths;
}

std::string file_slug(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (c == '.' && !out.empty() && std::isalnum(static_cast<unsigned char>(out.back()))) {
      out += '.';  // "fusion 0.5 MB" keeps its decimal point
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && (out.back() == '-' || out.back() == '.')) out.pop_back();
  return out;
}

}  // namespace gpuscale::report
