#include "topologies/src/topology.hpp"

#include <boost/graph/connected_components.hpp>
#include <fmt/format.h>

#include "topologies/src/cluster_expander.hpp"

namespace gpuscale::topo {
namespace {

void check_ports(const std::vector<Device>& devices, const std::vector<Link>& links) {
  std::vector<std::map<LinkKind, int>> used(devices.size());
  for (const auto& l : links) {
    used[l.a][l.kind] += l.lanes;
    used[l.b][l.kind] += l.lanes;
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    for (const auto& [kind, lanes] : used[i]) {
      const auto port = devices[i].ports.find(kind);
      if (port == devices[i].ports.end() || lanes <= port->second) continue;
      throw ConfigError(devices[i].origin,
                        fmt::format("device {} has {} {} lanes in its links but {} in its "
                                    "ports (remove lanes from its links or raise its ports)",
                                    devices[i].name, lanes, to_string(kind), port->second));
    }
  }
}

void check_connected(const Graph& graph, const std::vector<Device>& devices, int first_gpu) {
  std::vector<int> component(devices.size());
  const int count = boost::connected_components(graph, component.data());
  if (count <= 1) return;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (component[i] == component[first_gpu]) continue;
    throw ConfigError(devices[i].origin,
                      fmt::format("device {} is not connected to {} (add a link joining it to the "
                                  "rest of the machine)",
                                  devices[i].name, devices[first_gpu].name));
  }
}

}  // namespace

Topology Topology::build(const TopologyConfig& config) {
  ExpandedMachine machine = expand_machine(config);
  Topology t;
  t.name_ = config.name;
  t.description_ = config.description;
  t.file_ = config.file;
  t.routing_ = config.routing;
  t.variability_ = config.variability;
  t.devices_ = std::move(machine.devices);
  t.links_ = std::move(machine.links);
  t.fabric_ = std::move(machine.fabric);

  for (std::size_t i = 0; i < t.devices_.size(); ++i) {
    if (t.devices_[i].kind == DeviceKind::Gpu) t.gpus_.push_back(static_cast<int>(i));
  }
  if (t.gpus_.empty()) {
    throw ConfigError(Origin{config.file, 0}, "the machine has no GPU (add a device of kind gpu)");
  }

  t.graph_ = Graph(t.devices_.size());
  t.incident_.resize(t.devices_.size());
  for (std::size_t k = 0; k < t.links_.size(); ++k) {
    const Link& l = t.links_[k];
    boost::add_edge(l.a, l.b, static_cast<int>(k), t.graph_);
    t.incident_[l.a].push_back(static_cast<int>(k));
    t.incident_[l.b].push_back(static_cast<int>(k));
  }
  check_ports(t.devices_, t.links_);
  check_connected(t.graph_, t.devices_, t.gpus_.front());
  return t;
}

std::optional<int> Topology::find_device(const std::string& name) const {
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].name == name) return static_cast<int>(i);
  }
  return std::nullopt;
}

std::optional<int> Topology::nvlink_between(int a, int b) const {
  for (int k : incident_[a]) {
    const Link& l = links_[k];
    if (l.kind == LinkKind::NvLink && l.other(a) == b) return k;
  }
  return std::nullopt;
}

double Topology::nvswitch_bandwidth(int device) const {
  double sum = 0;
  for (int k : incident_[device]) {
    const Link& l = links_[k];
    if (devices_[l.other(device)].kind == DeviceKind::NvSwitch) {
      sum += l.effective_bandwidth().value;
    }
  }
  return sum;
}

}  // namespace gpuscale::topo
