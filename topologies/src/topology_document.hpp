// The document stage of loading a topology (docs/topology-schema.md): a file found by name or
// path, its `base:` chain resolved (links matched by endpoints, devices by name, the rest merged
// key by key), and for a cluster the node file merged under the cluster's own keys. The result is
// one ConfigNode whose values still know their file and line; topology_loader reads it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/core/config_tree.hpp"

namespace gpuscale::topo {

// The folder of shipped machines: $GPUSCALE_TOPOLOGIES_DIR if set, else the source tree's
// topologies/ folder this build came from.
std::string shipped_topologies_dir();

// Names of the shipped machines (file stems), sorted.
std::vector<std::string> shipped_topology_names();

// A shipped name ("dgx1-v100") or a path to a .yaml file. A relative path is taken relative to
// `relative_to_dir` (empty: the working directory). `origin` is blamed if nothing matches; with
// an empty origin (a name from the command line) a missing path blames the path itself.
std::string resolve_topology_file(const std::string& name_or_path,
                                  const std::string& relative_to_dir, const Origin& origin);

// The endpoints `a` and `b` of a link entry; throws if either is missing.
std::pair<std::string, std::string> link_endpoints(const ConfigNode& link);

// A file with its `base:` chain resolved (`depth` counts the files above it, to stop cycles).
ConfigNode load_chain(const std::string& path, int depth = 0);

// For a cluster document, the node's document with the cluster's keys derived over it; any
// other document unchanged.
ConfigNode merge_cluster_node(ConfigNode doc);

}  // namespace gpuscale::topo
