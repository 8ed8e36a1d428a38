#include "topologies/core/yaml_scalar.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace gpuscale {
namespace {

bool is_letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

bool can_be_plain(std::string_view text) {
  if (text.empty() || !(is_letter(text.front()) || text.front() == '_') || text.back() == ' ') {
    return false;
  }
  const bool safe_characters = std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_-.+/() ").find(c) != std::string_view::npos;
  });
  if (!safe_characters) return false;
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  constexpr std::array kResolvedWords{"y", "n", "yes", "no", "true", "false", "on", "off", "null"};
  return std::find(kResolvedWords.begin(), kResolvedWords.end(), lower) == kResolvedWords.end();
}

}  // namespace

std::string yaml_scalar(std::string_view text) {
  if (can_be_plain(text)) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace gpuscale
