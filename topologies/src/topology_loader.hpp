// Loads a topology file (docs/topology-schema.md) into a TopologyConfig: resolves `base:` chains
// and a cluster's node file, applies `--set` overrides, and reads every value strictly. All
// problems are ConfigErrors naming the file and line (or the option) at fault.
#pragma once

#include <string>
#include <vector>

#include "topologies/src/topology_config.hpp"
#include "topologies/src/topology_document.hpp"

namespace gpuscale::topo {

// `overrides` are "path=value" strings as given to --set.
TopologyConfig load_topology_config(const std::string& name_or_path,
                                    const std::vector<std::string>& overrides = {});
// The same with overrides written in a file (an experiment's or a study's `set:` entries): a bad
// one is reported at its entry's line. The loaders of those files check their machines so.
TopologyConfig load_topology_config_with(const std::string& name_or_path,
                                         const std::vector<Override>& overrides);
// The whole machine as one document, before it is read: `doc` (its `base:` chain resolved) with
// a cluster's node file merged in and the `overrides` applied.
ConfigNode machine_document(ConfigNode doc, const std::vector<std::string>& overrides);
ConfigNode machine_document(ConfigNode doc, const std::vector<Override>& overrides);

// The same for a document already read, its `base:` chain resolved (resolve_base): a machine
// written inline in another file. `path` names it in messages.
TopologyConfig load_topology_config(ConfigNode doc, const std::string& path,
                                    const std::vector<std::string>& overrides = {});
// And with overrides written elsewhere (`gpuscale serve`'s request.set:N), each reported there.
TopologyConfig load_topology_config_with(ConfigNode doc, const std::string& path,
                                         const std::vector<Override>& overrides);

}  // namespace gpuscale::topo
