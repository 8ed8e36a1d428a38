#include "workloads/src/workload_document.hpp"

#include <filesystem>

#include "topologies/core/config_reader.hpp"

namespace gpuscale::wl {
namespace {

constexpr int kMaxBaseDepth = 16;

ConfigNode load_chain(const std::string& path, int depth) {
  ConfigNode doc = ConfigNode::load_file(path);
  if (!doc.is_map()) {
    throw ConfigError(doc.origin(), "a workload file must be a mapping (name:, input:, layers: ...)");
  }
  const ConfigNode* base = doc.find("base");
  if (base == nullptr) return doc;
  if (depth >= kMaxBaseDepth) {
    throw ConfigError(base->origin(), "'base:' chain is too deep or circular (check which file "
                                      "derives from which)");
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  ConfigNode derived = load_chain(
      shipped_workloads().resolve(read_string(*base, "'base'"), dir, base->origin()), depth + 1);
  doc.erase("base");
  merge_into(derived, doc);
  return derived;
}

}  // namespace

const ShippedFolder& shipped_workloads() {
  static const ShippedFolder folder("workload", "GPUSCALE_WORKLOADS_DIR", "workloads");
  return folder;
}

ConfigNode load_workload_document(const std::string& name_or_path,
                                  const std::vector<std::string>& overrides) {
  ConfigNode doc = load_chain(shipped_workloads().resolve(name_or_path, "", Origin{}), 0);
  for (const std::string& assignment : overrides) apply_override(doc, assignment);
  return doc;
}

}  // namespace gpuscale::wl
