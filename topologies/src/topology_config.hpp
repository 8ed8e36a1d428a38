// Plain config structs of a topology file, as the loader reads them (docs/topology-schema.md).
// No YAML and no graph here: the loader fills these, the cluster expander flattens a cluster into
// them, and Topology builds its graph from them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topologies/core/distribution.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::topo {

enum class DeviceKind { Gpu, Cpu, PcieSwitch, Nic, NetworkSwitch, NvSwitch };
enum class LinkKind { NvLink, Pcie, Qpi, Upi, XBus, InfiniBand, Ethernet };

// How a copy between two GPUs without a direct path travels (docs/topology-schema.md#routing).
enum class RoutingMode { Direct, TwoHopGpu, HostStaged, Pcie };

const char* to_string(DeviceKind kind);
const char* to_string(LinkKind kind);
const char* to_string(RoutingMode mode);
std::optional<DeviceKind> device_kind_from_string(const std::string& name);
std::optional<LinkKind> link_kind_from_string(const std::string& name);
std::optional<RoutingMode> routing_mode_from_string(const std::string& name);
std::vector<std::string> device_kind_names();
std::vector<std::string> link_kind_names();
std::vector<std::string> routing_mode_names();

struct LinkKindConfig {
  BytesPerSecond lane_bandwidth;  // per direction
  Seconds latency;
  double efficiency = 1.0;  // fraction of the data rate bulk copies reach
};

struct DeviceConfig {
  std::string name;
  DeviceKind kind = DeviceKind::Gpu;
  std::string model;
  std::optional<Bytes> memory;         // GPUs only
  std::map<LinkKind, int> ports;       // lanes per link kind; absent kind = unchecked
  Seconds latency;                     // crossing the device (switch cut-through)
  Origin origin;
  int cores = 0;                       // CPUs only: cores of the socket (0: not given)
  Hertz clock;                         // CPUs only: base clock (0: not given)
};

struct LinkConfig {
  std::string a, b;
  LinkKind kind = LinkKind::Pcie;
  int lanes = 1;
  BytesPerSecond lane_bandwidth;  // resolved from the link kind unless overridden
  Seconds latency;
  double efficiency = 1.0;
  Origin origin;

  std::string id() const { return a + "-" + b; }
};

struct FatTreeConfig {
  int rails = 1;
  int taper = 1;          // leaf down-links per up-link
  int switch_radix = 36;  // ports per switch
  int levels = 0;         // 2 (leaf, spine) or 3 (leaf, spine, core); 0: the fewest that hold the nodes
  Seconds switch_latency;
  LinkKind link_kind = LinkKind::InfiniBand;
  int link_lanes = 4;     // lanes of one port
  Origin origin;

  // A leaf's node ports: taper down-links per up-link, the rest of its ports up.
  int leaf_node_ports() const { return switch_radix * taper / (taper + 1); }
  int leaf_up_links() const { return switch_radix - leaf_node_ports(); }
  // Two levels: every spine port takes one leaf at least, so at most radix leaves. Three levels
  // (a pod is a two-level tree whose spines give half their ports to its leaves and half to the
  // cores; each core takes one spine of every pod): radix/2 leaves a pod, at most radix pods.
  int max_nodes(int tree_levels) const {
    const int leaves = tree_levels == 2 ? switch_radix : switch_radix * (switch_radix / 2);
    return leaf_node_ports() * leaves;
  }
  // The levels a cluster of `nodes` gets: `levels` if set, else 2 when a two-level tree holds them.
  int levels_for(int nodes) const {
    if (levels != 0) return levels;
    return nodes <= max_nodes(2) ? 2 : 3;
  }
};

struct ClusterConfig {
  int nodes = 1;
  FatTreeConfig network;
};

// How the machine's times vary from iteration to iteration (docs/variability.md), each a
// factor drawn per rank and iteration when a run samples (`gpuscale run --samples`).
struct MachineVariability {
  Distribution compute;  // a GPU's forward and backward kernels of one iteration
  Distribution host;     // a host thread's work for one GPU (or one process) in one iteration
  Distribution input;    // the decode threads' time for one process's batch (the input pipeline)
};

struct TopologyConfig {
  std::string name;
  std::string description;
  std::string file;  // where it was loaded from
  RoutingMode routing = RoutingMode::Direct;
  std::vector<DeviceConfig> devices;  // in file order
  std::vector<LinkConfig> links;      // in file order
  std::map<LinkKind, LinkKindConfig> link_kinds;
  // Set for a cluster: `devices`/`links` then hold the node template, and the expander builds
  // the whole machine from it.
  std::optional<ClusterConfig> cluster;
  MachineVariability variability;
};

}  // namespace gpuscale::topo
