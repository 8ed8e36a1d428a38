// The document stage of loading a topology (docs/topology-schema.md): a file found by name or
// path, its `base:` chain resolved (links matched by endpoints, devices by name, the rest merged
// key by key), and for a cluster the node file merged under the cluster's own keys. The result is
// one ConfigNode whose values still know their file and line; topology_loader reads it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "topologies/core/config_tree.hpp"
#include "topologies/core/shipped_files.hpp"

namespace gpuscale::topo {

// The shipped machines: topologies/*.yaml, or $GPUSCALE_TOPOLOGIES_DIR if set.
const ShippedFolder& shipped_topologies();

// The endpoints `a` and `b` of a link entry; throws if either is missing.
std::pair<std::string, std::string> link_endpoints(const ConfigNode& link);

// A file with its `base:` chain resolved (`depth` counts the files above it, to stop cycles).
ConfigNode load_chain(const std::string& path, int depth = 0);
// A document with its `base:` chain resolved, a relative base taken from `dir`.
ConfigNode resolve_base(ConfigNode doc, const std::string& dir, int depth = 0);

// For a cluster document, the node's document with the cluster's keys derived over it; any
// other document unchanged.
ConfigNode merge_cluster_node(ConfigNode doc);

}  // namespace gpuscale::topo
