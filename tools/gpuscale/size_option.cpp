#include "tools/gpuscale/size_option.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "topologies/core/error.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::cli {
namespace {

// nccl-tests' parsesize (src/common.cu:226-261): a number and one letter K, M or G, either case,
// binary ("We use the binary system, so M=Mebibytes and G=Gibibytes"). nullopt when `text` is not
// of that form.
std::optional<double> nccl_tests_size(std::string_view text) {
  if (text.size() < 2) return std::nullopt;
  const char letter = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  const double unit = letter == 'K'   ? 1024.0
                      : letter == 'M' ? 1024.0 * 1024
                      : letter == 'G' ? 1024.0 * 1024 * 1024
                                      : 0;
  if (unit == 0) return std::nullopt;
  text.remove_suffix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return number * unit;
}

}  // namespace

double parse_size(const std::string& option, const std::string& text) {
  const Origin where{option, 0};
  double bytes = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    if (const auto binary = nccl_tests_size(text)) {
      bytes = *binary;
    } else {
      try {
        bytes = parse_bytes(text).value;
      } catch (const std::invalid_argument& e) {
        throw ConfigError(where, e.what());
      }
    }
  }
  if (bytes > kMaxBytes) {
    throw ConfigError(where, fmt::format("size '{}' is more than 1 EiB (write e.g. '100MiB')", text));
  }
  if (!(bytes > 0) || !std::isfinite(bytes)) {
    throw ConfigError(where, fmt::format("size '{}' must be a positive number of bytes (write e.g. "
                                         "'100MiB' or '1e8')", text));
  }
  return bytes;
}

}  // namespace gpuscale::cli
