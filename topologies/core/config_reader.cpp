#include "topologies/core/config_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

namespace gpuscale {
namespace {

const ConfigNode& expect_scalar(const ConfigNode& node, std::string_view what) {
  if (!node.is_scalar()) {
    throw ConfigError(node.origin(), fmt::format("{} must be a single value, not a {}", what,
                                                 node.is_map() ? "mapping" : "list"));
  }
  return node;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

template <typename Quantity>
Quantity read_quantity(const ConfigNode& node, std::string_view what,
                       Quantity (*parse)(std::string_view)) {
  expect_scalar(node, what);
  try {
    return parse(node.value());
  } catch (const std::invalid_argument& e) {
    throw ConfigError(node.origin(), fmt::format("{}: {}", what, e.what()));
  }
}

}  // namespace

std::string read_string(const ConfigNode& node, std::string_view what) {
  return expect_scalar(node, what).value();
}

void check_name(const std::string& name, std::string_view what, const Origin& where,
                NameUse use) {
  const auto in_file_names = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == '+';
  };
  const auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; };
  if (name.size() > kMaxNameLength) {
    throw ConfigError(where, fmt::format("{} '{}...' has {} characters, more than {} (shorten it)",
                                         what, name.substr(0, 32), name.size(), kMaxNameLength));
  }
  if (name.empty() || std::any_of(name.begin(), name.end(), control)) {
    throw ConfigError(where, fmt::format("{} must be some text without control characters", what));
  }
  if (use == NameUse::file &&
      (name.front() == '.' || !std::all_of(name.begin(), name.end(), in_file_names))) {
    throw ConfigError(where, fmt::format("{} '{}' may hold only letters, digits and '_-.+', and "
                                         "may not start with '.' (it names a folder)",
                                         what, name));
  }
}

std::string read_name(const ConfigNode& node, std::string_view what, NameUse use) {
  std::string name = read_string(node, what);
  check_name(name, what, node.origin(), use);
  return name;
}

long read_integer(const ConfigNode& node, std::string_view what, long min, long max) {
  const std::string& text = expect_scalar(node, what).value();
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool whole = end == text.data() + text.size();
  if (whole && (ec == std::errc::result_out_of_range || value < min || value > max)) {
    throw ConfigError(node.origin(),
                      fmt::format("{} is {}, outside {}..{} (choose a value in that range)", what,
                                  text, min, max));
  }
  if (ec != std::errc{} || !whole) {
    throw ConfigError(node.origin(),
                      fmt::format("{} '{}' is not a whole number (write e.g. '{}')", what, text,
                                  min));
  }
  return value;
}

double read_number(const ConfigNode& node, std::string_view what, double min, double max) {
  const std::string& text = expect_scalar(node, what).value();
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) {
    throw ConfigError(node.origin(), fmt::format("{} '{}' is not a number", what, text));
  }
  if (value < min || value > max) {
    throw ConfigError(node.origin(),
                      fmt::format("{} is {}, outside {}..{} (choose a value in that range)", what,
                                  text, min, max));
  }
  return value;
}

BytesPerSecond read_bandwidth(const ConfigNode& node, std::string_view what) {
  const BytesPerSecond bw = read_quantity(node, what, &parse_bandwidth);
  if (bw.value <= 0) {
    throw ConfigError(node.origin(),
                      fmt::format("{} must be positive (write e.g. '25 GB/s')", what));
  }
  return bw;
}

Seconds read_seconds(const ConfigNode& node, std::string_view what) {
  return read_quantity(node, what, &parse_seconds);
}

Bytes read_bytes(const ConfigNode& node, std::string_view what) {
  const Bytes b = read_quantity(node, what, &parse_bytes);
  if (b.value <= 0) {
    throw ConfigError(node.origin(), fmt::format("{} must be positive (write e.g. '16 GB')", what));
  }
  return b;
}

Hertz read_frequency(const ConfigNode& node, std::string_view what) {
  const Hertz f = read_quantity(node, what, &parse_frequency);
  if (f.value <= 0) {
    throw ConfigError(node.origin(),
                      fmt::format("{} must be positive (write e.g. '1530 MHz')", what));
  }
  return f;
}

bool read_bool(const ConfigNode& node, std::string_view what) {
  const std::string& text = expect_scalar(node, what).value();
  if (text == "true") return true;
  if (text == "false") return false;
  throw ConfigError(node.origin(), fmt::format("{} '{}' must be true or false", what, text));
}

std::string read_one_of(const ConfigNode& node, std::string_view what,
                        const std::vector<std::string>& allowed) {
  std::string value = read_string(node, what);
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    throw ConfigError(node.origin(), unknown_name_message(what, value, allowed));
  }
  return value;
}

std::vector<const ConfigNode*> items_or_one(const ConfigNode& node, std::string_view what) {
  std::vector<const ConfigNode*> items;
  if (node.is_scalar()) {
    items.push_back(&node);
  } else if (node.is_sequence() && !node.items().empty()) {
    for (const ConfigNode& item : node.items()) items.push_back(&item);
  } else {
    throw ConfigError(node.origin(), fmt::format("{} must be a value or a non-empty list", what));
  }
  return items;
}

std::vector<int> read_counts(const ConfigNode& node, std::string_view what, int max) {
  std::vector<int> values;
  for (const ConfigNode* item : items_or_one(node, what)) {
    values.push_back(static_cast<int>(read_integer(*item, what, 1, max)));
  }
  return values;
}

std::optional<std::string> nearest_name(std::string_view key,
                                        const std::vector<std::string>& allowed) {
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, key.size() / 3) + 1;
  for (const auto& candidate : allowed) {
    const std::size_t d = edit_distance(key, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string name_hint(std::string_view name, const std::vector<std::string>& known) {
  if (known.empty()) return "there are none";
  if (auto near = nearest_name(name, known)) return fmt::format("did you mean '{}'?", *near);
  return fmt::format("known: {}", fmt::join(known, ", "));
}

std::string unknown_name_message(std::string_view what, std::string_view name,
                                 const std::vector<std::string>& known) {
  // With nothing known there is nothing to hint at: the caller says how to add one.
  if (known.empty()) return fmt::format("unknown {} '{}'", what, name);
  return fmt::format("unknown {} '{}' ({})", what, name, name_hint(name, known));
}

MapReader::MapReader(const ConfigNode& node, std::string what,
                     const std::vector<std::string>& known)
    : node_(node), what_(std::move(what)) {
  if (!node.is_map()) {
    throw ConfigError(node.origin(), fmt::format("{} must be a mapping of keys to values", what_));
  }
  for (const auto& entry : node.entries()) {
    if (std::find(known.begin(), known.end(), entry.key) != known.end()) continue;
    throw ConfigError(entry.where(), fmt::format("unknown key '{}' in {} ({})", entry.key, what_,
                                                 name_hint(entry.key, known)));
  }
}

const ConfigNode& MapReader::require(std::string_view key, std::string_view example) const {
  const ConfigNode* value = node_.find(key);
  if (value == nullptr) {
    throw ConfigError(node_.origin(), fmt::format("{} lacks '{}' (add e.g. '{}: {}')", what_, key,
                                                  key, example));
  }
  return *value;
}

std::string MapReader::string(std::string_view key, std::string_view example) const {
  return read_string(require(key, example), fmt::format("'{}' of {}", key, what_));
}

std::string MapReader::name(std::string_view key, std::string_view example, NameUse use) const {
  return read_name(require(key, example), fmt::format("'{}' of {}", key, what_), use);
}

std::optional<std::string> MapReader::optional_string(std::string_view key) const {
  const ConfigNode* value = node_.find(key);
  if (value == nullptr) return std::nullopt;
  return read_string(*value, fmt::format("'{}' of {}", key, what_));
}

}  // namespace gpuscale
