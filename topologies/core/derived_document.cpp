#include "topologies/core/derived_document.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "topologies/core/config_reader.hpp"

namespace gpuscale {
namespace {

constexpr int kMaxBaseDepth = 16;

ConfigNode load_chain(const std::string& path, const ShippedFolder& folder,
                      std::string_view mapping_example, const BeforeMerge& before_merge,
                      int depth) {
  ConfigNode doc = ConfigNode::load_file(path);
  if (!doc.is_map()) {
    throw ConfigError(doc.origin(), fmt::format("a {} file must be a mapping ({})",
                                                folder.what(), mapping_example));
  }
  const ConfigNode* base = doc.find("base");
  if (base == nullptr) return doc;
  if (depth >= kMaxBaseDepth) {
    throw ConfigError(base->origin(), "'base:' chain is too deep or circular (check which file "
                                      "derives from which)");
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  ConfigNode derived =
      load_chain(folder.resolve(read_string(*base, "'base'"), dir, base->origin()), folder,
                 mapping_example, before_merge, depth + 1);
  doc.erase("base");
  if (before_merge) before_merge(derived, doc);
  merge_into(derived, doc);
  return derived;
}

}  // namespace

ConfigNode load_derived_document(const std::string& path, const ShippedFolder& folder,
                                 std::string_view mapping_example, const BeforeMerge& before_merge) {
  return load_chain(path, folder, mapping_example, before_merge, 0);
}

}  // namespace gpuscale
