#include "topologies/src/topology_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "topologies/core/config_reader.hpp"
#include "topologies/src/topology_document.hpp"

namespace gpuscale::topo {
namespace {

// The largest cluster gpuscale builds: 4x the 16,384 GPUs of today's largest training jobs.
constexpr long kMaxClusterGpus = 65'536;

bool valid_device_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// --- Reading stage: a merged document into TopologyConfig -----------------------------------

LinkKind read_link_kind(const ConfigNode& node, std::string_view what) {
  const std::string name = read_string(node, what);
  if (auto kind = link_kind_from_string(name)) return *kind;
  throw ConfigError(node.origin(), unknown_name_message("link kind", name, link_kind_names()));
}

// A link kind given as a mapping key (`link_kinds:`, `ports:`); `context` ends the message.
LinkKind link_kind_of_key(const ConfigNode::Entry& entry, std::string_view context) {
  if (auto kind = link_kind_from_string(entry.key)) return *kind;
  throw ConfigError(entry.where(),
                    unknown_name_message("link kind", entry.key, link_kind_names()) +
                        std::string(context));
}

std::map<LinkKind, LinkKindConfig> read_link_kinds(const ConfigNode* node) {
  std::map<LinkKind, LinkKindConfig> kinds;
  if (node == nullptr) return kinds;
  if (!node->is_map()) {
    throw ConfigError(node->origin(), "'link_kinds' must map link kinds to their figures");
  }
  for (const auto& entry : node->entries()) {
    const std::string& name = entry.key;
    const ConfigNode& figures = entry.value;
    const LinkKind kind = link_kind_of_key(entry, "");
    const std::string what = fmt::format("link kind '{}'", name);
    MapReader r(figures, what, {"lane_bandwidth", "latency", "efficiency"});
    LinkKindConfig cfg;
    cfg.lane_bandwidth = read_bandwidth(r.require("lane_bandwidth", "25 GB/s"),
                                        fmt::format("lane_bandwidth of {}", what));
    cfg.latency = read_seconds(r.require("latency", "0.3 us"), fmt::format("latency of {}", what));
    if (const ConfigNode* e = r.find("efficiency")) {
      cfg.efficiency = read_number(*e, fmt::format("efficiency of {}", what), 0.01, 1.0);
    }
    kinds[kind] = cfg;
  }
  return kinds;
}

std::map<LinkKind, int> read_ports(const ConfigNode& node, const std::string& device) {
  if (!node.is_map()) {
    throw ConfigError(node.origin(), fmt::format("'ports' of device {} must map link kinds to lane "
                                                 "counts (e.g. {{nvlink: 6, pcie: 16}})",
                                                 device));
  }
  std::map<LinkKind, int> ports;
  for (const auto& entry : node.entries()) {
    const LinkKind kind = link_kind_of_key(entry, fmt::format(" in ports of {}", device));
    ports[kind] = static_cast<int>(
        read_integer(entry.value, fmt::format("{} ports of {}", entry.key, device), 0, 100000));
  }
  return ports;
}

std::vector<DeviceConfig> read_devices(const ConfigNode& node) {
  if (!node.is_map()) {
    throw ConfigError(node.origin(), "'devices' must map device names to attributes (e.g. "
                                     "gpu0: {kind: gpu, model: V100-SXM2, memory: 16 GB})");
  }
  std::vector<DeviceConfig> devices;
  for (const auto& entry : node.entries()) {
    const std::string& name = entry.key;
    const ConfigNode& attributes = entry.value;
    check_name(name, "device name", entry.where());
    if (!valid_device_name(name)) {
      throw ConfigError(entry.where(),
                        fmt::format("device name '{}' may hold only a-z, 0-9, '_' and '-'", name));
    }
    const std::string what = fmt::format("device {}", name);
    MapReader r(attributes, what, {"kind", "model", "memory", "ports", "latency", "cores", "clock"});
    DeviceConfig d;
    d.name = name;
    d.origin = attributes.origin();
    const ConfigNode& kind_node = r.require("kind", "gpu");
    const auto kind = device_kind_from_string(read_string(kind_node, "kind"));
    if (!kind) {
      throw ConfigError(kind_node.origin(), unknown_name_message("device kind", kind_node.value(),
                                                                 device_kind_names()));
    }
    d.kind = *kind;
    if (d.kind == DeviceKind::Gpu) {
      d.model = r.string("model", "V100-SXM2");
      d.memory = read_bytes(r.require("memory", "16 GB"), fmt::format("memory of {}", what));
    } else {
      d.model = r.optional_string("model").value_or("");
      if (const ConfigNode* m = r.find("memory")) {
        d.memory = read_bytes(*m, fmt::format("memory of {}", what));
      }
    }
    if (const ConfigNode* p = r.find("ports")) d.ports = read_ports(*p, name);
    for (const char* key : {"cores", "clock"}) {
      const ConfigNode* n = r.find(key);
      if (n == nullptr) continue;
      if (d.kind != DeviceKind::Cpu) {
        throw ConfigError(n->origin(), fmt::format("{} of {}: only a cpu has {}", key, what, key));
      }
      if (std::string_view(key) == "cores") {
        d.cores = static_cast<int>(read_integer(*n, fmt::format("cores of {}", what), 1, 4096));
      } else {
        d.clock = read_frequency(*n, fmt::format("clock of {}", what));
      }
    }
    if (const ConfigNode* l = r.find("latency")) {
      d.latency = read_seconds(*l, fmt::format("latency of {}", what));
    }
    devices.push_back(std::move(d));
  }
  return devices;
}

std::vector<LinkConfig> read_links(const ConfigNode& node, const std::vector<DeviceConfig>& devices,
                                   const std::map<LinkKind, LinkKindConfig>& kinds) {
  if (!node.is_sequence()) {
    throw ConfigError(node.origin(), "'links' must be a list (e.g. - {a: gpu0, b: gpu1, kind: "
                                     "nvlink, lanes: 1})");
  }
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name);
  auto check_endpoint = [&](const ConfigNode& value, const std::string& link_id) {
    const std::string name = read_string(value, "endpoint");
    if (std::find(names.begin(), names.end(), name) != names.end()) return name;
    throw ConfigError(value.origin(), fmt::format("link {}: {}", link_id,
                                                  unknown_name_message("endpoint", name, names)));
  };

  std::vector<LinkConfig> links;
  std::set<std::pair<std::string, std::string>> seen;
  for (const ConfigNode& item : node.items()) {
    const auto [a_name, b_name] = link_endpoints(item);
    const std::string id = a_name + "-" + b_name;
    const std::string what = fmt::format("link {}", id);
    MapReader r(item, what, {"a", "b", "kind", "lanes", "lane_bandwidth", "latency", "efficiency"});
    LinkConfig l;
    l.origin = item.origin();
    l.a = check_endpoint(*r.find("a"), id);
    l.b = check_endpoint(*r.find("b"), id);
    if (l.a == l.b) {
      throw ConfigError(item.origin(), fmt::format("{} joins {} to itself (give two devices)", what,
                                                   l.a));
    }
    if (!seen.insert(std::minmax(l.a, l.b)).second) {
      throw ConfigError(item.origin(), fmt::format("{} is declared twice (merge them into one link "
                                                   "with more lanes)",
                                                   what));
    }
    l.kind = read_link_kind(r.require("kind", "nvlink"), fmt::format("kind of {}", what));
    l.lanes = static_cast<int>(
        read_integer(r.require("lanes", "1"), fmt::format("lanes of {}", what), 1, 100000));
    const auto figures = kinds.find(l.kind);
    const ConfigNode* bw = r.find("lane_bandwidth");
    const ConfigNode* lat = r.find("latency");
    if (figures == kinds.end() && (bw == nullptr || lat == nullptr)) {
      throw ConfigError(item.origin(),
                        fmt::format("{}: link kind '{}' has no figures (add link_kinds: {{{}: "
                                    "{{lane_bandwidth: ..., latency: ...}}}})",
                                    what, to_string(l.kind), to_string(l.kind)));
    }
    l.lane_bandwidth = bw ? read_bandwidth(*bw, fmt::format("lane_bandwidth of {}", what))
                          : figures->second.lane_bandwidth;
    l.latency = lat ? read_seconds(*lat, fmt::format("latency of {}", what))
                    : figures->second.latency;
    if (const ConfigNode* e = r.find("efficiency")) {
      l.efficiency = read_number(*e, fmt::format("efficiency of {}", what), 0.01, 1.0);
    } else if (figures != kinds.end()) {
      l.efficiency = figures->second.efficiency;
    }
    links.push_back(std::move(l));
  }
  return links;
}

// Also checks that the cluster can be built, at the line (or --set) of the value at fault: the
// node has a NIC per rail, the switches have node and up-link ports, and a fat tree of this
// radix and its levels holds the nodes (FatTreeConfig holds the sizing rule).
ClusterConfig read_cluster(const ConfigNode& node, const std::vector<DeviceConfig>& devices,
                           const std::map<LinkKind, LinkKindConfig>& link_kinds) {
  MapReader r(node, "cluster", {"node", "nodes", "network"});
  r.require("node", "sierra-node");  // already merged at the document stage
  ClusterConfig c;
  const ConfigNode& nodes = r.require("nodes", "4");
  c.nodes = static_cast<int>(read_integer(nodes, "'nodes' of cluster", 1, 1'000'000));
  // Refused before the machine is built: its graph, routes and SimGrid platform grow with it.
  const long gpus_per_node = std::count_if(devices.begin(), devices.end(), [](const DeviceConfig& d) {
    return d.kind == DeviceKind::Gpu;
  });
  if (c.nodes * gpus_per_node > kMaxClusterGpus) {
    throw ConfigError(nodes.origin(),
                      fmt::format("{} nodes of {} GPUs make {} GPUs, more than gpuscale simulates "
                                  "(at most {}; lower 'nodes')",
                                  c.nodes, gpus_per_node, c.nodes * gpus_per_node,
                                  kMaxClusterGpus));
  }

  MapReader n(r.require("network", "{topology: fat_tree, ...}"), "cluster network",
              {"topology", "rails", "taper", "switch_radix", "levels", "switch_latency", "link"});
  const ConfigNode& topology = n.require("topology", "fat_tree");
  if (read_string(topology, "'topology' of cluster network") != "fat_tree") {
    throw ConfigError(topology.origin(),
                      unknown_name_message("network topology", topology.value(), {"fat_tree"}));
  }
  FatTreeConfig& f = c.network;
  f.origin = n.node().origin();
  const ConfigNode& rails = n.require("rails", "1");
  f.rails = static_cast<int>(read_integer(rails, "'rails' of cluster network", 1, 16));
  f.taper = static_cast<int>(read_integer(n.require("taper", "1"), "'taper' of cluster network", 1, 64));
  const ConfigNode& radix = n.require("switch_radix", "36");
  f.switch_radix = static_cast<int>(read_integer(radix, "'switch_radix' of cluster network", 4, 1024));
  const ConfigNode* levels = n.find("levels");
  if (levels != nullptr) {
    f.levels = static_cast<int>(read_integer(*levels, "'levels' of cluster network", 2, 3));
  }
  f.switch_latency = read_seconds(n.require("switch_latency", "90 ns"),
                                  "'switch_latency' of cluster network");
  MapReader link(n.require("link", "{kind: infiniband, lanes: 4}"), "cluster network link",
                 {"kind", "lanes"});
  const ConfigNode& kind = link.require("kind", "infiniband");
  f.link_kind = read_link_kind(kind, "kind of cluster network link");
  f.link_lanes = static_cast<int>(
      read_integer(link.require("lanes", "4"), "lanes of cluster network link", 1, 64));

  if (!link_kinds.contains(f.link_kind)) {
    throw ConfigError(kind.origin(), fmt::format("link kind '{}' has no figures (add it under "
                                                 "link_kinds)",
                                                 to_string(f.link_kind)));
  }
  const auto nics = std::count_if(devices.begin(), devices.end(),
                                  [](const DeviceConfig& d) { return d.kind == DeviceKind::Nic; });
  if (f.rails > nics) {
    throw ConfigError(rails.origin(), fmt::format("{} rails need {} NICs per node, but the node has "
                                                  "{} (lower 'rails' or add NICs to the node)",
                                                  f.rails, f.rails, nics));
  }
  if (f.leaf_node_ports() < 1 || f.leaf_up_links() < 1) {
    throw ConfigError(radix.origin(), fmt::format("a radix-{} switch with taper {} leaves no node "
                                                  "or up-link ports (raise switch_radix)",
                                                  f.switch_radix, f.taper));
  }
  const int tree_levels = f.levels_for(c.nodes);
  if (c.nodes > f.max_nodes(tree_levels)) {
    const std::string fix = tree_levels == 2 ? "set levels: 3, or raise switch_radix or taper"
                                             : "raise switch_radix or taper";
    throw ConfigError(levels != nullptr && tree_levels == 2 ? levels->origin() : nodes.origin(),
                      fmt::format("{} nodes exceed what a {}-level fat tree of radix {} and taper "
                                  "{} holds ({} nodes; {})",
                                  c.nodes, tree_levels, f.switch_radix, f.taper,
                                  f.max_nodes(tree_levels), fix));
  }
  return c;
}

MachineVariability read_variability(const ConfigNode& node) {
  MapReader r(node, "variability", {"compute", "host", "input"});
  MachineVariability v;
  if (const ConfigNode* compute = r.find("compute")) {
    v.compute = read_distribution(*compute, "variability.compute");
  }
  if (const ConfigNode* host = r.find("host")) {
    v.host = read_distribution(*host, "variability.host");
  }
  if (const ConfigNode* input = r.find("input")) {
    v.input = read_distribution(*input, "variability.input");
  }
  return v;
}

TopologyConfig read_topology(const ConfigNode& doc, const std::string& path) {
  MapReader r(doc, "topology",
              {"name", "description", "routing", "link_kinds", "devices", "links", "cluster",
               "variability"});
  TopologyConfig t;
  t.file = path;
  t.name = r.name("name", "my-machine");
  t.description = r.optional_string("description").value_or("");
  if (const ConfigNode* routing = r.find("routing")) {
    const auto mode = routing_mode_from_string(read_string(*routing, "'routing'"));
    if (!mode) {
      throw ConfigError(routing->origin(), unknown_name_message("routing mode", routing->value(),
                                                                routing_mode_names()));
    }
    t.routing = *mode;
  }
  t.link_kinds = read_link_kinds(r.find("link_kinds"));
  t.devices = read_devices(r.require("devices", "{gpu0: {kind: gpu, ...}}"));
  if (const ConfigNode* links = r.find("links")) {
    t.links = read_links(*links, t.devices, t.link_kinds);
  }
  if (const ConfigNode* cluster = r.find("cluster")) {
    t.cluster = read_cluster(*cluster, t.devices, t.link_kinds);
  }
  if (const ConfigNode* variability = r.find("variability")) {
    t.variability = read_variability(*variability);
  }
  return t;
}

}  // namespace

TopologyConfig load_topology_config(const std::string& name_or_path,
                                    const std::vector<std::string>& overrides) {
  const std::string path = shipped_topologies().resolve(name_or_path, "", Origin{});
  return load_topology_config(load_chain(path, 0), path, overrides);
}

TopologyConfig load_topology_config_with(const std::string& name_or_path,
                                         const std::vector<Override>& overrides) {
  const std::string path = shipped_topologies().resolve(name_or_path, "", Origin{});
  return read_topology(machine_document(load_chain(path, 0), overrides), path);
}

namespace {

// `gpus.KEY=VALUE` sets KEY of every GPU of the machine (`--set gpus.memory=32GB`: a DGX-1 of
// 32 GB V100s), as `devices.gpuN.KEY=VALUE` would one at a time; any other override is itself.
std::vector<Override> per_gpu(const ConfigNode& doc, const Override& o) {
  constexpr std::string_view kPrefix = "gpus.";
  if (!o.assignment.starts_with(kPrefix)) return {o};
  const std::string rest = o.assignment.substr(kPrefix.size());
  std::vector<Override> each;
  if (const ConfigNode* devices = doc.is_map() ? doc.find("devices") : nullptr;
      devices != nullptr && devices->is_map()) {
    for (const auto& entry : devices->entries()) {
      const ConfigNode* kind = entry.value.is_map() ? entry.value.find("kind") : nullptr;
      if (kind != nullptr && kind->is_scalar() && kind->value() == "gpu")
        each.push_back({"devices." + entry.key + "." + rest, o.written_at});
    }
  }
  if (each.empty()) {
    const Origin origin =
        o.written_at.file.empty() ? Origin{"--set " + o.assignment, 0} : o.written_at;
    throw ConfigError(origin, "the machine has no device of kind gpu to set (name one: "
                              "devices.NAME.KEY=VALUE)");
  }
  return each;
}

}  // namespace

ConfigNode machine_document(ConfigNode doc, const std::vector<Override>& overrides) {
  // `--set cluster.node=...` chooses which node file is merged in, so it applies first; every
  // other override applies to the merged machine, where the node's keys exist.
  const auto chooses_node = [](const Override& o) {
    return o.assignment.starts_with("cluster.node=");
  };
  for (const Override& o : overrides) {
    if (chooses_node(o)) apply_override(doc, o.assignment, o.written_at);
  }
  doc = merge_cluster_node(std::move(doc));
  for (const Override& o : overrides) {
    if (chooses_node(o)) continue;
    for (const Override& gpu : per_gpu(doc, o))
      apply_override(doc, gpu.assignment, gpu.written_at);
  }
  return doc;
}

ConfigNode machine_document(ConfigNode doc, const std::vector<std::string>& overrides) {
  std::vector<Override> given;
  for (const std::string& assignment : overrides) given.push_back({assignment, Origin{}});
  return machine_document(std::move(doc), given);
}

TopologyConfig load_topology_config(ConfigNode doc, const std::string& path,
                                    const std::vector<std::string>& overrides) {
  return read_topology(machine_document(std::move(doc), overrides), path);
}

TopologyConfig load_topology_config_with(ConfigNode doc, const std::string& path,
                                         const std::vector<Override>& overrides) {
  return read_topology(machine_document(std::move(doc), overrides), path);
}

}  // namespace gpuscale::topo
