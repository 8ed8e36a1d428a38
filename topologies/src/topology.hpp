// The machine as a Boost.Graph: devices are vertices, links are edges (vertex index = device
// index, edge property = link index). Built from a TopologyConfig, a cluster expanded node by
// node, and validated: known kinds and positive figures (loader), lanes within ports, one
// connected machine, at least one GPU. Routing and rings work on this model.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topologies/src/topology_config.hpp"

namespace gpuscale::topo {

struct Device {
  std::string name;
  DeviceKind kind;
  std::string model;
  std::optional<Bytes> memory;
  std::map<LinkKind, int> ports;  // lanes per link kind; absent kind = unchecked
  Seconds latency;  // crossing the device
  int node = 0;     // which node of a cluster
  Origin origin;
  int cores = 0;    // a CPU socket's cores (0: not given)
  Hertz clock;      // a CPU's base clock (0: not given)
};

struct Link {
  std::string id;  // "a-b"
  int a = 0, b = 0;
  LinkKind kind;
  int lanes = 1;
  BytesPerSecond bandwidth;  // nominal, lanes x lane bandwidth, per direction
  double efficiency = 1.0;
  Seconds latency;
  Origin origin;

  BytesPerSecond effective_bandwidth() const { return {bandwidth.value * efficiency}; }
  int other(int device) const { return device == a ? b : a; }
};

// How a cluster's nodes are laid out in the device and link vectors, and its fat tree. Node i's
// copy of template device j is device i * devices_per_node + j (links likewise), so a route found
// inside node 0 serves every node by an offset.
// Each rail's fat tree. Leaves are grouped into pods of `leaves_per_pod`, each pod with
// `spines_per_pod` spines of its own (a two-level tree is one pod); in a three-level tree, spine
// `a` of every pod joins the `cores_per_group` cores of group `a`, one cable to each.
struct Fabric {
  struct Rail {
    std::vector<int> node_leaf;      // leaf index of each node
    std::vector<int> node_uplink;    // link NIC -> leaf of each node
    std::vector<int> leaf_device;    // device index of each leaf switch
    std::vector<int> spine_device;   // device index of spine a of pod p, at p * spines_per_pod + a
    std::vector<std::vector<int>> trunk;  // [leaf][a] link index, leaf to spine a of its pod
    std::vector<int> core_device;    // core j of group a at a * cores_per_group + j
    std::vector<std::vector<int>> core_trunk;  // [p * spines_per_pod + a][j] link index
  };
  int nodes = 1;
  int devices_per_node = 0;
  int links_per_node = 0;
  int leaves_per_pod = 1;
  int spines_per_pod = 0;
  int cores_per_group = 0;  // 0: two levels
  std::vector<int> rail_nic;  // template device index of the NIC on each rail
  std::vector<Rail> rails;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                    boost::no_property, boost::property<boost::edge_index_t, int>>;

class Topology {
 public:
  // Expands a cluster, builds the graph and validates it. Throws ConfigError.
  static Topology build(const TopologyConfig& config);

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::string& file() const { return file_; }
  RoutingMode default_routing() const { return routing_; }
  const MachineVariability& variability() const { return variability_; }

  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<Link>& links() const { return links_; }
  const std::vector<int>& gpus() const { return gpus_; }  // device indices, node by node
  const Graph& graph() const { return graph_; }
  const std::optional<Fabric>& fabric() const { return fabric_; }
  int nodes() const { return fabric_ ? fabric_->nodes : 1; }

  std::optional<int> find_device(const std::string& name) const;
  // Links incident to a device, in link order.
  const std::vector<int>& links_of(int device) const { return incident_[device]; }
  // The NVLink between two devices, if any.
  std::optional<int> nvlink_between(int a, int b) const;
  // A device's effective bandwidth to the NVSwitches it is linked to, bytes/s per direction
  // (0: none).
  double nvswitch_bandwidth(int device) const;

 private:
  std::string name_, description_, file_;
  RoutingMode routing_ = RoutingMode::Direct;
  MachineVariability variability_;
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<int> gpus_;
  std::vector<std::vector<int>> incident_;
  Graph graph_;
  std::optional<Fabric> fabric_;
};

}  // namespace gpuscale::topo
