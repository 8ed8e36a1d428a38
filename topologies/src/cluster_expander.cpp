#include "topologies/src/cluster_expander.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace gpuscale::topo {
namespace {

Device make_device(const DeviceConfig& d, const std::string& name, int node) {
  return Device{name, d.kind, d.model, d.memory, d.ports, d.latency, node, d.origin, d.cores, d.clock};
}

Link make_link(const LinkConfig& l, int a, int b, std::string id) {
  return Link{std::move(id), a, b, l.kind, l.lanes,
              BytesPerSecond{l.lanes * l.lane_bandwidth.value}, l.efficiency, l.latency, l.origin};
}

// Copies the node template `count` times; a single machine is a cluster of one unnamed node.
void add_nodes(const TopologyConfig& config, int count, ExpandedMachine& out) {
  std::unordered_map<std::string, int> index;
  for (std::size_t j = 0; j < config.devices.size(); ++j) {
    index[config.devices[j].name] = static_cast<int>(j);
  }
  const int per_node = static_cast<int>(config.devices.size());
  out.devices.reserve(out.devices.size() + static_cast<std::size_t>(count) * config.devices.size());
  out.links.reserve(out.links.size() + static_cast<std::size_t>(count) * config.links.size());
  for (int node = 0; node < count; ++node) {
    const std::string prefix = count > 1 || config.cluster ? fmt::format("n{}.", node) : "";
    for (const auto& d : config.devices) out.devices.push_back(make_device(d, prefix + d.name, node));
    const int offset = node * per_node;
    for (const auto& l : config.links) {
      out.links.push_back(make_link(l, offset + index.at(l.a), offset + index.at(l.b),
                                    prefix + l.id()));
    }
  }
}

int add_switch(ExpandedMachine& out, std::string name, const FatTreeConfig& net) {
  out.devices.push_back(Device{std::move(name), DeviceKind::NetworkSwitch, "fat-tree switch",
                               std::nullopt,
                               {{net.link_kind, net.switch_radix * net.link_lanes}},
                               net.switch_latency, -1, net.origin, 0, Hertz{}});
  return static_cast<int>(out.devices.size()) - 1;
}

int add_fabric_link(ExpandedMachine& out, int a, int b, int ports, const LinkKindConfig& kind,
                    const FatTreeConfig& net) {
  const int lanes = ports * net.link_lanes;
  out.links.push_back(Link{out.devices[a].name + "-" + out.devices[b].name, a, b, net.link_kind,
                           lanes, BytesPerSecond{lanes * kind.lane_bandwidth.value},
                           kind.efficiency, kind.latency, net.origin});
  return static_cast<int>(out.links.size()) - 1;
}

// The fewest spines whose ports take every leaf's share of up-links in a two-level tree; `up`
// spines always do, since then each leaf needs one port per spine and leaves <= radix.
int two_level_spines(int leaves, int up, int radix) {
  int spines = leaves == 1 ? 0 : (leaves * up + radix - 1) / radix;
  while (spines > 0 && spines < up && leaves * ((up + spines - 1) / spines) > radix) ++spines;
  return spines;
}

void add_fat_trees(const TopologyConfig& config, ExpandedMachine& out) {
  const ClusterConfig& cluster = *config.cluster;
  const FatTreeConfig& net = cluster.network;
  Fabric fabric;
  fabric.nodes = cluster.nodes;
  fabric.devices_per_node = static_cast<int>(config.devices.size());
  fabric.links_per_node = static_cast<int>(config.links.size());

  for (std::size_t j = 0; j < config.devices.size(); ++j) {
    if (config.devices[j].kind == DeviceKind::Nic &&
        static_cast<int>(fabric.rail_nic.size()) < net.rails) {
      fabric.rail_nic.push_back(static_cast<int>(j));
    }
  }
  // The loader has checked that the node has a NIC per rail and that the tree holds the nodes.
  const int down = net.leaf_node_ports();
  const int up = net.leaf_up_links();
  const int leaves = (cluster.nodes + down - 1) / down;
  if (net.levels_for(cluster.nodes) == 2) {
    fabric.leaves_per_pod = leaves;
    fabric.spines_per_pod = two_level_spines(leaves, up, net.switch_radix);
  } else {
    // Each leaf sends one cable to each spine of its pod; each spine gives half its ports to the
    // pod's leaves and half to its core group, one cable per core.
    fabric.leaves_per_pod = net.switch_radix / 2;
    fabric.spines_per_pod = up;
    fabric.cores_per_group = net.switch_radix / 2;
  }
  const int pods = (leaves + fabric.leaves_per_pod - 1) / fabric.leaves_per_pod;
  const int spines = fabric.spines_per_pod;
  const int cores = pods > 1 ? spines * fabric.cores_per_group : 0;
  const LinkKindConfig& kind = config.link_kinds.at(net.link_kind);

  for (int r = 0; r < net.rails; ++r) {
    Fabric::Rail rail;
    for (int l = 0; l < leaves; ++l) {
      rail.leaf_device.push_back(add_switch(out, fmt::format("r{}.leaf{}", r, l), net));
    }
    for (int i = 0; i < pods * spines; ++i) {
      const std::string name = pods > 1 ? fmt::format("r{}.pod{}.spine{}", r, i / spines, i % spines)
                                        : fmt::format("r{}.spine{}", r, i);
      rail.spine_device.push_back(add_switch(out, name, net));
    }
    for (int c = 0; c < cores; ++c) {
      rail.core_device.push_back(add_switch(out, fmt::format("r{}.core{}", r, c), net));
    }
    for (int node = 0; node < cluster.nodes; ++node) {
      const int leaf = node / down;
      const int nic = node * fabric.devices_per_node + fabric.rail_nic[r];
      rail.node_leaf.push_back(leaf);
      rail.node_uplink.push_back(add_fabric_link(out, nic, rail.leaf_device[leaf], 1, kind, net));
    }
    rail.trunk.assign(leaves, std::vector<int>(spines, -1));
    for (int l = 0; l < leaves; ++l) {
      const int pod = l / fabric.leaves_per_pod;
      for (int a = 0; a < spines; ++a) {
        const int cables = up / spines + (a < up % spines ? 1 : 0);
        rail.trunk[l][a] = add_fabric_link(out, rail.leaf_device[l],
                                           rail.spine_device[pod * spines + a], cables, kind, net);
      }
    }
    if (cores > 0) {
      rail.core_trunk.assign(pods * spines, std::vector<int>(fabric.cores_per_group, -1));
      for (int i = 0; i < pods * spines; ++i) {
        const int group = i % spines;
        for (int j = 0; j < fabric.cores_per_group; ++j) {
          rail.core_trunk[i][j] = add_fabric_link(
              out, rail.spine_device[i],
              rail.core_device[group * fabric.cores_per_group + j], 1, kind, net);
        }
      }
    }
    fabric.rails.push_back(std::move(rail));
  }
  out.fabric = std::move(fabric);
}

}  // namespace

ExpandedMachine expand_machine(const TopologyConfig& config) {
  ExpandedMachine out;
  add_nodes(config, config.cluster ? config.cluster->nodes : 1, out);
  if (config.cluster) add_fat_trees(config, out);
  return out;
}

}  // namespace gpuscale::topo
