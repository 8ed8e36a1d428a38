// A YAML document as a plain tree whose every node remembers where it came from.
//
// gpuscale's inputs are YAML files that may derive from other files (`base:`) and be overridden
// on the command line (`--set key=value`). Errors must still name the file and line, or the
// option, that supplied the faulty value. yaml-cpp's nodes cannot carry that through merges, so
// loaders convert a document to ConfigNode once, merge and override ConfigNodes, then read them
// into plain config structs. Nothing past a loader sees a ConfigNode.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topologies/core/error.hpp"

namespace gpuscale {

class ConfigNode {
 public:
  enum class Kind { Null, Scalar, Sequence, Map };
  struct Entry;

  ConfigNode() = default;
  static ConfigNode scalar(std::string value, Origin origin);
  static ConfigNode sequence(Origin origin);
  static ConfigNode map(Origin origin);

  // Parses a YAML file. Throws ConfigError for a missing or unreadable file, malformed YAML
  // (with the line yaml-cpp reports), or anything yaml_document.hpp refuses (a key given twice,
  // aliases, a second document, bytes that are not UTF-8, tabs, an input too large or deep).
  static ConfigNode load_file(const std::string& path);
  // Parses YAML text; `name` stands in for the file name in origins and errors.
  static ConfigNode load_string(const std::string& text, const std::string& name);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_scalar() const { return kind_ == Kind::Scalar; }
  bool is_sequence() const { return kind_ == Kind::Sequence; }
  bool is_map() const { return kind_ == Kind::Map; }
  const Origin& origin() const { return origin_; }

  const std::string& value() const { return value_; }  // a scalar's text
  const std::vector<ConfigNode>& items() const { return items_; }
  std::vector<ConfigNode>& items() { return items_; }
  const std::vector<Entry>& entries() const { return entries_; }
  std::vector<Entry>& entries() { return entries_; }

  const ConfigNode* find(std::string_view key) const;
  ConfigNode* find(std::string_view key);
  void set(std::string key, ConfigNode value);  // replaces the entry or appends it
  void erase(std::string_view key);

 private:
  Kind kind_ = Kind::Null;
  Origin origin_;
  std::string value_;
  std::vector<ConfigNode> items_;
  std::vector<Entry> entries_;
};

struct ConfigNode::Entry {
  std::string key;
  ConfigNode value;
  Origin key_origin;  // where the key is written; empty for keys added in code

  const Origin& where() const { return key_origin.file.empty() ? value.origin() : key_origin; }
};

// Deep merge used by `base:` derivation: mappings merge key by key (recursively); any other
// value in `overlay` replaces the one in `base`.
void merge_into(ConfigNode& base, const ConfigNode& overlay);

// One `--set` style override and where it is written (an experiment's `set:` entry); empty: the
// option itself.
struct Override {
  std::string assignment;
  Origin written_at;
};

// Applies one `--set path=value` to a document. The path is dot-separated; a number selects an
// item of a sequence (`links.3.lanes=1`). A missing final key is added, so that the reader then
// rejects it as unknown with the option as its origin. Throws ConfigError naming the option.
// `written_at`: where the assignment is written when a file holds it (an experiment's `set:`);
// the values it sets, and its errors, carry that origin instead of the option's.
void apply_override(ConfigNode& root, std::string_view assignment,
                    const Origin& written_at = Origin{});

}  // namespace gpuscale
