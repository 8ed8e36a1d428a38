#include "tools/gpuscale/size_option.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace gpuscale::cli {

double parse_size(const std::string& option, const std::string& text) {
  const Origin where{option, 0};
  double bytes = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    try {
      bytes = parse_bytes(text).value;
    } catch (const std::invalid_argument& e) {
      throw ConfigError(where, e.what());
    }
  }
  if (!(bytes > 0) || !std::isfinite(bytes)) {
    throw ConfigError(where, fmt::format("size '{}' must be a positive number of bytes (write e.g. "
                                         "'100MiB' or '1e8')", text));
  }
  return bytes;
}

}  // namespace gpuscale::cli
