// Turns a cluster (a node template repeated N times, joined by a fat tree) into one flat list of
// devices and links, and records the layout that routing needs.
//
// Fat tree (docs/topology-schema.md#a-cluster-of-nodes): per rail, leaves with
// down = floor(radix * taper / (taper + 1)) node ports and up = radix - down up-links;
// leaves = ceil(nodes / down); spines: the fewest (at least leaves * up / radix) whose ports take
// every leaf's cables; leaf l joins spine s with up / spines cables (the first up % spines spines
// get one more), aggregated into one link.
#pragma once

#include <vector>

#include "topologies/src/topology.hpp"

namespace gpuscale::topo {

struct ExpandedMachine {
  std::vector<Device> devices;
  std::vector<Link> links;
  std::optional<Fabric> fabric;  // set for clusters
};

// Resolves device/link names into indices; for a cluster, copies the node template per node
// and builds each rail's fat tree. The config is one the loader accepted.
ExpandedMachine expand_machine(const TopologyConfig& config);

}  // namespace gpuscale::topo
