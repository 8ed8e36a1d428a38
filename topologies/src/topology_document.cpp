#include "topologies/src/topology_document.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "topologies/core/config_reader.hpp"

namespace gpuscale::topo {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxBaseDepth = 16;

bool is_removal(const ConfigNode& entry) {
  const ConfigNode* remove = entry.is_map() ? entry.find("remove") : nullptr;
  return remove != nullptr && read_bool(*remove, "'remove'");
}

void merge_links(ConfigNode& base_links, const ConfigNode& overlay_links) {
  if (!overlay_links.is_sequence() || !base_links.is_sequence()) {
    throw ConfigError(overlay_links.origin(), "'links' must be a list of links");
  }
  auto& items = base_links.items();
  for (const ConfigNode& change : overlay_links.items()) {
    const auto [a, b] = link_endpoints(change);
    const auto match = std::find_if(items.begin(), items.end(), [&](const ConfigNode& link) {
      const auto [la, lb] = link_endpoints(link);
      return (la == a && lb == b) || (la == b && lb == a);
    });
    if (is_removal(change)) {
      if (match == items.end()) {
        throw ConfigError(change.origin(),
                          fmt::format("no link {}-{} in the base to remove (check the names)", a, b));
      }
      items.erase(match);
    } else if (match != items.end()) {
      merge_into(*match, change);
    } else {
      items.push_back(change);
    }
  }
}

void merge_devices(ConfigNode& doc, ConfigNode& base_devices, const ConfigNode& overlay_devices) {
  if (!overlay_devices.is_map() || !base_devices.is_map()) {
    throw ConfigError(overlay_devices.origin(), "'devices' must map device names to attributes");
  }
  for (const auto& entry : overlay_devices.entries()) {
    const std::string& name = entry.key;
    const ConfigNode& change = entry.value;
    if (!is_removal(change)) {
      if (ConfigNode* existing = base_devices.find(name)) {
        merge_into(*existing, change);
      } else {
        base_devices.entries().push_back(entry);
      }
      continue;
    }
    if (base_devices.find(name) == nullptr) {
      throw ConfigError(change.origin(),
                        fmt::format("no device '{}' in the base to remove (check the name)", name));
    }
    base_devices.erase(name);
    if (ConfigNode* links = doc.find("links"); links != nullptr && links->is_sequence()) {
      std::erase_if(links->items(), [&](const ConfigNode& link) {
        const auto [a, b] = link_endpoints(link);
        return a == name || b == name;
      });
    }
  }
}

// `overlay` derives from `base`: links match by endpoints, devices by name, the rest merges
// key by key.
ConfigNode derive(ConfigNode base, const ConfigNode& overlay) {
  for (const auto& entry : overlay.entries()) {
    ConfigNode* existing = base.find(entry.key);
    if (existing != nullptr && entry.key == "links") {
      merge_links(*existing, entry.value);
    } else if (existing != nullptr && entry.key == "devices") {
      merge_devices(base, *existing, entry.value);
    } else if (existing != nullptr) {
      merge_into(*existing, entry.value);
    } else {
      base.entries().push_back(entry);
    }
  }
  return base;
}

}  // namespace

std::pair<std::string, std::string> link_endpoints(const ConfigNode& link) {
  const ConfigNode* a = link.is_map() ? link.find("a") : nullptr;
  const ConfigNode* b = link.is_map() ? link.find("b") : nullptr;
  if (a == nullptr || b == nullptr || !a->is_scalar() || !b->is_scalar()) {
    throw ConfigError(link.origin(), "a link needs its endpoints 'a' and 'b' (e.g. {a: gpu0, "
                                     "b: gpu1, kind: nvlink, lanes: 1})");
  }
  return {a->value(), b->value()};
}

const ShippedFolder& shipped_topologies() {
  static const ShippedFolder folder("topology", "GPUSCALE_TOPOLOGIES_DIR", "topologies");
  return folder;
}

// A file with its `base:` chain resolved.
ConfigNode load_chain(const std::string& path, int depth) {
  return resolve_base(ConfigNode::load_file(path), fs::path(path).parent_path().string(), depth);
}

ConfigNode resolve_base(ConfigNode doc, const std::string& dir, int depth) {
  if (!doc.is_map()) {
    throw ConfigError(doc.origin(), "a topology file must be a mapping (name:, devices:, links: ...)");
  }
  if (const ConfigNode* base = doc.find("base")) {
    if (depth >= kMaxBaseDepth) {
      throw ConfigError(base->origin(), "'base:' chain is too deep or circular (check which file "
                                        "derives from which)");
    }
    const std::string base_path =
        shipped_topologies().resolve(read_string(*base, "'base'"), dir, base->origin());
    ConfigNode own = doc;
    own.erase("base");
    doc = derive(load_chain(base_path, depth + 1), own);
  }
  return doc;
}

// The whole machine's document: for a cluster, the node's document with the cluster's keys
// derived over it, once the whole chain has chosen which node it is.
ConfigNode merge_cluster_node(ConfigNode doc) {
  const ConfigNode* cluster = doc.find("cluster");
  const ConfigNode* node = cluster != nullptr && cluster->is_map() ? cluster->find("node") : nullptr;
  if (node == nullptr) return doc;
  // A relative node path is relative to the file that names it.
  const std::string dir =
      node->origin().line > 0 ? fs::path(node->origin().file).parent_path().string() : "";
  const std::string node_path =
      shipped_topologies().resolve(read_string(*node, "'node' of cluster"), dir, node->origin());
  ConfigNode node_doc = load_chain(node_path, 0);
  if (node_doc.find("cluster") != nullptr) {
    throw ConfigError(node->origin(), "the node of a cluster must be a single machine, not "
                                      "another cluster");
  }
  return derive(std::move(node_doc), doc);
}

}  // namespace gpuscale::topo
