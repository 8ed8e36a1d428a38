#include "topologies/core/config_tree.hpp"

#include "topologies/core/yaml_document.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace gpuscale {

ConfigNode ConfigNode::scalar(std::string value, Origin origin) {
  ConfigNode n;
  n.kind_ = Kind::Scalar;
  n.value_ = std::move(value);
  n.origin_ = std::move(origin);
  return n;
}

ConfigNode ConfigNode::sequence(Origin origin) {
  ConfigNode n;
  n.kind_ = Kind::Sequence;
  n.origin_ = std::move(origin);
  return n;
}

ConfigNode ConfigNode::map(Origin origin) {
  ConfigNode n;
  n.kind_ = Kind::Map;
  n.origin_ = std::move(origin);
  return n;
}

ConfigNode ConfigNode::load_string(const std::string& text, const std::string& name) {
  ConfigNode tree = parse_yaml_document(text, name);
  if (tree.is_null()) tree = ConfigNode::map(Origin{name, 1});
  return tree;
}

ConfigNode ConfigNode::load_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw ConfigError(Origin{path, 0}, "no such file (check the path or the name)");
  }
  // Refused before it is read: a file that large is not an input (yaml_document.hpp).
  if (std::filesystem::file_size(path, ec) > kMaxYamlBytes && !ec) {
    throw ConfigError(Origin{path, 0}, fmt::format("larger than the {} MiB gpuscale reads from "
                                                   "one file: is this the right file?",
                                                   kMaxYamlBytes >> 20));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text;
  if (in) text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (!in.is_open() || in.bad()) {
    throw ConfigError(Origin{path, 0}, "cannot read the file (check its permissions)");
  }
  return load_string(text, path);
}

const ConfigNode* ConfigNode::find(std::string_view key) const {
  for (const auto& e : entries_) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

ConfigNode* ConfigNode::find(std::string_view key) {
  for (auto& e : entries_) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

void ConfigNode::set(std::string key, ConfigNode value) {
  if (ConfigNode* existing = find(key)) {
    *existing = std::move(value);
  } else {
    entries_.push_back({std::move(key), std::move(value), Origin{}});
  }
}

void ConfigNode::erase(std::string_view key) {
  std::erase_if(entries_, [&](const Entry& e) { return e.key == key; });
}

void merge_into(ConfigNode& base, const ConfigNode& overlay) {
  if (!base.is_map() || !overlay.is_map()) {
    base = overlay;
    return;
  }
  for (const auto& entry : overlay.entries()) {
    if (ConfigNode* existing = base.find(entry.key)) {
      merge_into(*existing, entry.value);
    } else {
      base.entries().push_back(entry);
    }
  }
}

void apply_override(ConfigNode& root, std::string_view assignment, const Origin& written_at) {
  const Origin origin =
      written_at.file.empty() ? Origin{fmt::format("--set {}", assignment), 0} : written_at;
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw ConfigError(origin, "expected KEY=VALUE (e.g. --set cluster.nodes=16)");
  }
  const std::string_view path = assignment.substr(0, eq);
  const std::string value(assignment.substr(eq + 1));

  ConfigNode* node = &root;
  std::string_view rest = path;
  while (true) {
    const auto dot = rest.find('.');
    const std::string_view part = rest.substr(0, dot);
    const bool last = dot == std::string_view::npos;
    if (part.empty()) throw ConfigError(origin, "empty key in the path (write e.g. a.b.c=value)");

    if (node->is_sequence()) {
      if (node->items().empty()) {
        throw ConfigError(origin, fmt::format("'{}' selects an item of an empty list (there is "
                                              "nothing to set)", part));
      }
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), index);
      if (ec != std::errc{} || end != part.data() + part.size() || index >= node->items().size()) {
        throw ConfigError(origin, fmt::format("'{}' selects an item of a list: write an index "
                                              "from 0 to {}",
                                              part, node->items().size() - 1));
      }
      node = &node->items()[index];
    } else if (node->is_map()) {
      ConfigNode* child = node->find(part);
      if (child == nullptr) {
        if (!last) {
          throw ConfigError(origin, fmt::format("no key '{}' to descend into", part));
        }
        node->set(std::string(part), ConfigNode::scalar(value, origin));
        return;
      }
      node = child;
    } else {
      throw ConfigError(origin, fmt::format("'{}' is a plain value, not a mapping or list", part));
    }
    if (last) break;
    rest = rest.substr(dot + 1);
  }
  if (node->is_map() || node->is_sequence()) {
    throw ConfigError(origin, "the key names a whole mapping or list: set one of its values");
  }
  *node = ConfigNode::scalar(value, origin);
}

}  // namespace gpuscale
