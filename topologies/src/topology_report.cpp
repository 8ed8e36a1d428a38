#include "topologies/src/topology_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace gpuscale::topo {
namespace {

struct GpuPair {
  int src, dst;
};

// Which GPU pairs the report lists (see kAllRoutesUpToGpus).
std::vector<GpuPair> listed_pairs(const Topology& t) {
  std::vector<int> node0;
  for (int g : t.gpus()) {
    if (t.devices()[g].node == 0) node0.push_back(g);
  }
  const bool all = static_cast<int>(t.gpus().size()) <= kAllRoutesUpToGpus;
  const std::vector<int>& within = all ? t.gpus() : node0;
  std::vector<GpuPair> pairs;
  for (std::size_t i = 0; i < within.size(); ++i) {
    for (std::size_t j = i + 1; j < within.size(); ++j) pairs.push_back({within[i], within[j]});
  }
  if (!all) {
    const int stride = t.fabric()->devices_per_node;
    for (int node = 1; node < t.nodes(); ++node) pairs.push_back({node0[0], node0[0] + node * stride});
  }
  return pairs;
}

std::string routes_listed(const Topology& t) {
  return static_cast<int>(t.gpus().size()) <= kAllRoutesUpToGpus
             ? "all pairs"
             : "pairs within node 0, and from its first GPU to each other node";
}

double gbps(BytesPerSecond bw) { return bw.value / 1e9; }
double micros(Seconds t) { return t.value * 1e6; }

std::vector<std::string> names(const Topology& t, const std::vector<int>& devices) {
  std::vector<std::string> out;
  for (int d : devices) out.push_back(t.devices()[d].name);
  return out;
}

std::string joined_path(const Topology& t, const std::vector<int>& devices) {
  return fmt::format("{}", fmt::join(names(t, devices), " > "));
}

// Counts devices of each kind, for the one-line summary.
std::string inventory(const Topology& t) {
  std::map<DeviceKind, int> count;
  for (const Device& d : t.devices()) ++count[d.kind];
  std::vector<std::string> parts;
  for (const auto& [kind, n] : count) parts.push_back(fmt::format("{} {}", n, to_string(kind)));
  return fmt::format("{}; {} links", fmt::join(parts, ", "), t.links().size());
}

// A cell of the GPU matrix: "NV2" for two NVLinks, else the route kind.
std::string matrix_cell(const TopologyView& v, int a, int b) {
  if (a == b) return "X";
  if (const auto k = v.topology.nvlink_between(a, b)) {
    return fmt::format("NV{}", v.topology.links()[*k].lanes);
  }
  switch (v.router.route(a, b).kind) {
    case RouteKind::TwoHopGpu: return "2HOP";
    case RouteKind::HostStaged: return "HOST";
    case RouteKind::P2p: return "P2P";
    case RouteKind::Network: return "NET";
    case RouteKind::NvLink: return "NVL";
    case RouteKind::NvSwitch: return "NVS";
  }
  return "?";
}

}  // namespace

nlohmann::ordered_json topology_json(const TopologyView& v) {
  const Topology& t = v.topology;
  nlohmann::ordered_json j;
  j["name"] = t.name();
  j["description"] = t.description();
  j["file"] = t.file();
  j["routing"] = to_string(v.router.mode());
  j["nodes"] = t.nodes();
  j["gpus"] = names(t, t.gpus());

  auto& devices = j["devices"] = nlohmann::ordered_json::array();
  for (const Device& d : t.devices()) {
    nlohmann::ordered_json dev{{"name", d.name}, {"kind", to_string(d.kind)}, {"model", d.model}};
    if (d.memory) dev["memory_GB"] = d.memory->value / 1e9;
    devices.push_back(std::move(dev));
  }

  auto& links = j["links"] = nlohmann::ordered_json::array();
  for (const Link& l : t.links()) {
    links.push_back({{"id", l.id},
                     {"a", t.devices()[l.a].name},
                     {"b", t.devices()[l.b].name},
                     {"kind", to_string(l.kind)},
                     {"lanes", l.lanes},
                     {"bandwidth_GBps", gbps(l.bandwidth)},
                     {"effective_GBps", gbps(l.effective_bandwidth())},
                     {"latency_us", micros(l.latency)}});
  }

  auto& routes = j["routes"] = nlohmann::ordered_json::array();
  for (const GpuPair& p : listed_pairs(t)) {
    const Route r = v.router.route(p.src, p.dst);
    nlohmann::ordered_json legs = nlohmann::ordered_json::array();
    for (const Leg& leg : r.legs) {
      legs.push_back({{"path", names(t, leg.devices)},
                      {"bandwidth_GBps", gbps(leg.bandwidth(t))},
                      {"latency_us", micros(leg.latency(t))}});
    }
    routes.push_back({{"src", t.devices()[p.src].name},
                      {"dst", t.devices()[p.dst].name},
                      {"kind", to_string(r.kind)},
                      {"path", names(t, r.devices())},
                      {"legs", std::move(legs)}});
  }
  j["routes_listed"] = routes_listed(t);

  auto& rings = j["rings"] = nlohmann::ordered_json::array();
  for (const auto& ring : v.rings.rings) rings.push_back(names(t, ring));
  j["rings_over_nvlink"] = v.rings.over_nvlink;
  return j;
}

std::string topology_table(const TopologyView& v) {
  const Topology& t = v.topology;
  std::string out = fmt::format("{}: {}\n", t.name(), t.description());
  out += fmt::format("file: {}\nrouting: {}   nodes: {}   GPUs: {}\n", t.file(),
                     to_string(v.router.mode()), t.nodes(), t.gpus().size());
  out += fmt::format("devices: {}\n", inventory(t));

  // The GPU matrix of node 0, as `nvidia-smi topo -m` draws it.
  std::vector<int> node0;
  for (int g : t.gpus()) {
    if (t.devices()[g].node == 0) node0.push_back(g);
  }
  std::size_t width = 5;
  for (int g : node0) width = std::max(width, t.devices()[g].name.size() + 1);
  out += fmt::format("\nGPUs{} (NVn: n NVLinks; else the route: NVS through NVSwitches, 2HOP via a "
                     "GPU, HOST via host memory, P2P over PCIe/CPUs, NET)\n",
                     t.nodes() > 1 ? " of node 0" : "");
  out += fmt::format("{:<{}}", "", width);
  for (int g : node0) out += fmt::format("{:>{}}", t.devices()[g].name, width);
  out += '\n';
  for (int a : node0) {
    out += fmt::format("{:<{}}", t.devices()[a].name, width);
    for (int b : node0) out += fmt::format("{:>{}}", matrix_cell(v, a, b), width);
    out += '\n';
  }

  out += "\nLinks (bandwidth per direction; effective = what bulk copies reach)\n";
  std::size_t id_width = 4;
  for (const Link& l : t.links()) id_width = std::max(id_width, l.id.size());
  const std::size_t shown_links = t.nodes() > 1 ? static_cast<std::size_t>(
                                                      t.fabric()->links_per_node)
                                                : t.links().size();
  for (std::size_t k = 0; k < shown_links; ++k) {
    const Link& l = t.links()[k];
    out += fmt::format("  {:<{}}  {:<10} x{:<3} {:>11}  eff {:>11}  {:>9}\n", l.id, id_width,
                       to_string(l.kind), l.lanes, format_bandwidth(l.bandwidth),
                       format_bandwidth(l.effective_bandwidth()), format_seconds(l.latency));
  }
  if (shown_links < t.links().size()) {
    out += fmt::format("  ... node 0's links shown; {} more in the other nodes and the network\n",
                       t.links().size() - shown_links);
  }

  out += fmt::format("\nRoutes without a direct NVLink ({})\n", routes_listed(t));
  for (const GpuPair& p : listed_pairs(t)) {
    const Route r = v.router.route(p.src, p.dst);
    if (r.kind == RouteKind::NvLink) continue;
    std::vector<std::string> legs;
    for (const Leg& leg : r.legs) {
      legs.push_back(fmt::format("{} ({}, {})", joined_path(t, leg.devices),
                                 format_bandwidth(leg.bandwidth(t)),
                                 format_seconds(leg.latency(t))));
    }
    out += fmt::format("  {} -> {}  {:<12} {}\n", t.devices()[p.src].name,
                       t.devices()[p.dst].name, to_string(r.kind),
                       fmt::join(legs, "  then  "));
  }

  out += fmt::format("\nRings: {} {}\n", v.rings.rings.size(),
                     v.rings.over_nvlink ? "over NVLink" : "(NVLinks close no ring: routed ring)");
  for (std::size_t i = 0; i < v.rings.rings.size(); ++i) {
    const auto& ring = v.rings.rings[i];
    const std::size_t shown = std::min<std::size_t>(ring.size(), 16);
    out += fmt::format("  {:>2}: {}{}\n", i,
                       fmt::join(names(t, {ring.begin(), ring.begin() + shown}), " "),
                       shown < ring.size() ? fmt::format(" ... ({} GPUs)", ring.size()) : "");
  }
  return out;
}

std::string topology_dot(const TopologyView& v) {
  const Topology& t = v.topology;
  std::string out = fmt::format("graph \"{}\" {{\n  label=\"{}\";\n  labelloc=t;\n", t.name(),
                                t.description());
  out += "  node [fontname=Helvetica, fontsize=10];\n  edge [fontname=Helvetica, fontsize=8];\n";
  for (const Device& d : t.devices()) {
    const char* style = "shape=box";
    switch (d.kind) {
      case DeviceKind::Gpu: style = "shape=box, style=filled, fillcolor=\"#76b900\""; break;
      case DeviceKind::Cpu: style = "shape=box, style=filled, fillcolor=\"#9ecae1\""; break;
      case DeviceKind::PcieSwitch: style = "shape=diamond"; break;
      case DeviceKind::Nic: style = "shape=hexagon"; break;
      case DeviceKind::NetworkSwitch: style = "shape=octagon"; break;
      case DeviceKind::NvSwitch: style = "shape=diamond, style=filled, fillcolor=\"#c7e9c0\""; break;
    }
    out += fmt::format("  \"{}\" [{}, label=\"{}\\n{}\"];\n", d.name, style, d.name, d.model);
  }
  for (const Link& l : t.links()) {
    // Width grows with the logarithm of bandwidth: 1 GB/s -> 1, 25 -> ~3.3, 50 -> ~3.8.
    const double width = 1.0 + std::log2(std::max(1.0, gbps(l.bandwidth))) / 2.0;
    const char* color = l.kind == LinkKind::NvLink ? "#76b900" : "#555555";
    out += fmt::format("  \"{}\" -- \"{}\" [penwidth={:.2f}, color=\"{}\", label=\"{} x{}\\n{}\"];\n",
                       t.devices()[l.a].name, t.devices()[l.b].name, width, color,
                       to_string(l.kind), l.lanes, format_bandwidth(l.bandwidth));
  }
  out += "}\n";
  return out;
}

}  // namespace gpuscale::topo
