#include "sim/core/output_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace gpuscale {

void write_output_file(const std::string& path, const std::string& text, const Origin& origin) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary);
    out << text;
    if (!out.flush()) {
      std::error_code ignored;
      std::filesystem::remove(partial, ignored);
      throw ConfigError(origin, fmt::format("cannot write '{}': check the folder exists and is "
                                            "writable", path));
    }
  }
  std::filesystem::rename(partial, path);
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
