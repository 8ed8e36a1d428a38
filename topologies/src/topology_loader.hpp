// Loads a topology file (docs/topology-schema.md) into a TopologyConfig: resolves `base:` chains
// and a cluster's node file, applies `--set` overrides, and reads every value strictly. All
// problems are ConfigErrors naming the file and line (or the option) at fault.
#pragma once

#include <string>
#include <vector>

#include "topologies/src/topology_config.hpp"

namespace gpuscale::topo {

// The folder of shipped machines: $GPUSCALE_TOPOLOGIES_DIR if set, else the source tree's
// topologies/ folder this build came from.
std::string shipped_topologies_dir();

// Names of the shipped machines (file stems), sorted.
std::vector<std::string> shipped_topology_names();

// A shipped name ("dgx1-v100") or a path to a .yaml file. A relative path is taken relative to
// `relative_to_dir` (empty: the working directory). `origin` is blamed if nothing matches.
std::string resolve_topology_file(const std::string& name_or_path,
                                  const std::string& relative_to_dir, const Origin& origin);

// `overrides` are "path=value" strings as given to --set.
TopologyConfig load_topology_config(const std::string& name_or_path,
                                    const std::vector<std::string>& overrides = {});

}  // namespace gpuscale::topo
