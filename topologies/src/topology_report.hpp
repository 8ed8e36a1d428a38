// What `gpuscale topo show` prints: a machine, its routes under one routing mode and its rings,
// as a table for people, JSON for scripts, or Graphviz DOT for a picture (link width grows with
// bandwidth, so a student sees the double NVLinks of a DGX-1 at a glance).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "topologies/src/rings.hpp"
#include "topologies/src/routing.hpp"

namespace gpuscale::topo {

// Machines up to this many GPUs list a route for every GPU pair; bigger ones list node 0's
// pairs and one route from its first GPU to each other node.
inline constexpr int kAllRoutesUpToGpus = 64;

struct TopologyView {
  const Topology& topology;
  const Router& router;
  const RingSet& rings;
};

// JSON: {"name", "description", "file", "routing", "nodes", "gpus": [names],
//  "devices": [{"name", "kind", "model", "memory_GB"?}],
//  "links": [{"id", "a", "b", "kind", "lanes", "bandwidth_GBps", "effective_GBps", "latency_us"}],
//  "routes": [{"src", "dst", "kind", "path": [names], "legs": [{"path", "bandwidth_GBps",
//              "latency_us"}]}], "routes_listed": "all pairs" | "...",
//  "rings": [[names]], "rings_over_nvlink": bool}. Bandwidths per direction, GB/s = 1e9 B/s.
nlohmann::ordered_json topology_json(const TopologyView& view);
std::string topology_table(const TopologyView& view);
std::string topology_dot(const TopologyView& view);

}  // namespace gpuscale::topo
