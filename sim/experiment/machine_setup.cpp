#include "sim/experiment/machine_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "topologies/core/error.hpp"
#include "topologies/src/rings.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::sim {

int gpus_per_node(const topo::Topology& t) {
  return static_cast<int>(std::count_if(t.gpus().begin(), t.gpus().end(),
                                        [&](int g) { return t.devices()[g].node == 0; }));
}

namespace {

// The GPUs a machine's description lists (a cluster's: one node's).
int gpus_in(const topo::TopologyConfig& config) {
  return static_cast<int>(
      std::count_if(config.devices.begin(), config.devices.end(),
                    [](const topo::DeviceConfig& d) { return d.kind == topo::DeviceKind::Gpu; }));
}

// Throws ConfigError when `gpus` GPUs do not fit machine `name` of `total` GPUs, `per_node` a node.
void check_fits(const std::string& name, int total, int per_node, int gpus,
                const Origin& written_at) {
  if (gpus > total && total == per_node) {
    throw ConfigError(written_at,
                      fmt::format("{} GPUs do not fit '{}': it has {} GPUs, so use 1 to {}", gpus,
                                  name, total, total));
  }
  if (gpus > total || (gpus > per_node && gpus % per_node != 0)) {
    // A job takes part of one node or whole nodes (machine_for sizes a cluster to whole nodes).
    const int below = gpus / per_node * per_node;
    throw ConfigError(written_at,
                      fmt::format("{} GPUs do not fit '{}': a job takes 1 to {} GPUs of one node "
                                  "or whole nodes of {} GPUs, so use {} or {}", gpus, name,
                                  per_node, per_node, below, below + per_node));
  }
}

}  // namespace

topo::TopologyConfig machine_config_for(const std::string& topology,
                                        const std::vector<std::string>& overrides, int gpus,
                                        const std::shared_ptr<const ConfigNode>& inline_document) {
  const auto load = [&](const std::vector<std::string>& all_overrides) {
    return inline_document ? topo::load_topology_config(*inline_document, topology, all_overrides)
                           : topo::load_topology_config(topology, all_overrides);
  };
  topo::TopologyConfig config = load(overrides);
  if (config.cluster) {
    // A cluster's config holds its node template: its GPUs are one node's.
    const int per_node = std::max(1, gpus_in(config));
    auto sized = overrides;
    sized.push_back(fmt::format("cluster.nodes={}", (gpus + per_node - 1) / per_node));
    config = load(sized);
  }
  return config;
}

topo::Topology machine_for(const std::string& topology, const std::vector<std::string>& overrides,
                           int gpus, const std::shared_ptr<const ConfigNode>& inline_document) {
  return topo::Topology::build(machine_config_for(topology, overrides, gpus, inline_document));
}

void check_job_fits(const topo::Topology& t, int gpus, const Origin& written_at) {
  check_fits(t.name(), static_cast<int>(t.gpus().size()), gpus_per_node(t), gpus, written_at);
}

void check_job_fits(const topo::TopologyConfig& config, int gpus, const Origin& written_at) {
  // A cluster's devices are one node's; a single machine's are all on its one node.
  const int per_node = gpus_in(config);
  if (per_node == 0) return;
  const int nodes = config.cluster ? config.cluster->nodes : 1;
  check_fits(config.name, per_node * nodes, per_node, gpus, written_at);
}

Placement place_job(const topo::Topology& t, int gpus) {
  check_job_fits(t, gpus, Origin{"--gpus", 0});
  const int per_node = gpus_per_node(t);
  Placement p;
  const int nodes = std::max(1, gpus / per_node);
  const int used_per_node = std::min(gpus, per_node);
  std::map<int, int> taken;  // GPUs chosen on each node
  for (int g : t.gpus()) {
    const int node = t.devices()[g].node;
    if (node >= nodes || taken[node] >= used_per_node) continue;
    ++taken[node];
    p.gpus.push_back(g);
    p.node_of_rank.push_back(node);
  }
  std::map<int, int> rank_of;
  for (size_t r = 0; r < p.gpus.size(); ++r) rank_of[p.gpus[r]] = static_cast<int>(r);
  // Which NIC a chain leaves its node through does not depend on the routing mode.
  const topo::Router router(t, t.default_routing());
  for (const auto& ring : topo::find_rings(t, 32, used_per_node, nodes, &router).rings) {
    std::vector<int> ranks;
    for (int device : ring) ranks.push_back(rank_of.at(device));
    p.rings.push_back(std::move(ranks));
  }
  return p;
}

}  // namespace gpuscale::sim
