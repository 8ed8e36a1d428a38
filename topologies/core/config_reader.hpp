// Strict, typed reading of ConfigNodes into plain config structs.
//
// A MapReader is built with the full list of keys a mapping may hold; any other key is an error
// that names the known keys and the nearest one ("did you mean 'bandwidth'?"), never silently
// ignored. Every error carries the origin of the offending node.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/core/config_tree.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale {

// Scalar conversions; `what` names the value in the error ("lanes of link gpu0-gpu3").
std::string read_string(const ConfigNode& node, std::string_view what);
long read_integer(const ConfigNode& node, std::string_view what, long min, long max);
double read_number(const ConfigNode& node, std::string_view what, double min, double max);
BytesPerSecond read_bandwidth(const ConfigNode& node, std::string_view what);  // > 0
Seconds read_seconds(const ConfigNode& node, std::string_view what);           // >= 0
Bytes read_bytes(const ConfigNode& node, std::string_view what);               // > 0
Hertz read_frequency(const ConfigNode& node, std::string_view what);           // > 0
bool read_bool(const ConfigNode& node, std::string_view what);

// A name shown in tables and output fields: 1 to kMaxNameLength characters, no control
// characters. One that also becomes a file or folder name (NameUse::file) may hold only letters,
// digits and "_-.+", and may not start with '.'.
inline constexpr std::size_t kMaxNameLength = 64;
enum class NameUse { shown, file };
std::string read_name(const ConfigNode& node, std::string_view what, NameUse use = NameUse::shown);
// The same rule for a name that is not a node's value (a mapping's key); throws at `where`.
void check_name(const std::string& name, std::string_view what, const Origin& where,
                NameUse use = NameUse::shown);

// The value if it is one of `allowed`; else a ConfigError naming the nearest or all of them.
std::string read_one_of(const ConfigNode& node, std::string_view what,
                        const std::vector<std::string>& allowed);

// A sequence's items, or a scalar as a list of one (`gpus: 8` or `gpus: [2, 4, 8]`). Throws for
// a mapping or an empty list.
std::vector<const ConfigNode*> items_or_one(const ConfigNode& node, std::string_view what);

// Integers in [1, max], from a value or a list of them (`gpus: [1, 2, 4, 8]`).
std::vector<int> read_counts(const ConfigNode& node, std::string_view what, int max);

// The entry of `allowed` nearest to `key` by edit distance, if it is close enough to be a typo.
std::optional<std::string> nearest_name(std::string_view key,
                                        const std::vector<std::string>& allowed);

// "did you mean 'nvlink'?" when a known name is near `name`, else "known: a, b, c" ("there are
// none" when `known` is empty).
std::string name_hint(std::string_view name, const std::vector<std::string>& known);

// "unknown link kind 'nvlnk' (did you mean 'nvlink'?)": what, the name, and its name_hint; no
// hint when `known` is empty.
std::string unknown_name_message(std::string_view what, std::string_view name,
                                 const std::vector<std::string>& known);

class MapReader {
 public:
  // Throws if `node` is not a mapping or holds a key outside `allowed`.
  MapReader(const ConfigNode& node, std::string what, const std::vector<std::string>& allowed);

  const ConfigNode& node() const { return node_; }
  const std::string& what() const { return what_; }
  const ConfigNode* find(std::string_view key) const { return node_.find(key); }
  const ConfigNode& require(std::string_view key, std::string_view example) const;

  std::string string(std::string_view key, std::string_view example) const;
  std::string name(std::string_view key, std::string_view example,
                   NameUse use = NameUse::shown) const;  // read_name's rule
  std::optional<std::string> optional_string(std::string_view key) const;

 private:
  const ConfigNode& node_;
  std::string what_;
};

}  // namespace gpuscale
