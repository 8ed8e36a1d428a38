#include "topologies/src/routing.hpp"

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/property_map.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "topologies/core/config_reader.hpp"
#include "topologies/core/error.hpp"
#include "topologies/src/topology_config.hpp"

namespace gpuscale::topo {
namespace {

// "A typical gradient chunk" for the additive path cost (see routing.hpp).
constexpr double kReferenceBytes = 1e6;

bool joins_sockets(LinkKind kind) {
  return kind == LinkKind::Qpi || kind == LinkKind::Upi || kind == LinkKind::XBus;
}

struct LinkFilter {
  const Topology* topology = nullptr;
  bool allow_nvlink = true;
  bool operator()(const Graph::edge_descriptor& e) const {
    const int k = boost::get(boost::edge_index, topology->graph(), e);
    return allow_nvlink || topology->links()[k].kind != LinkKind::NvLink;
  }
};

// Cut-through paths stay inside the source's node and never cross another GPU.
struct DeviceFilter {
  const Topology* topology = nullptr;
  int src = 0, dst = 0, node = 0;
  bool operator()(Graph::vertex_descriptor v) const {
    const Device& d = topology->devices()[v];
    if (static_cast<int>(v) == src || static_cast<int>(v) == dst) return true;
    return d.node == node && d.kind != DeviceKind::Gpu;
  }
};

Hop hop_from(const Topology& t, int link, int from) {
  return Hop{link, t.links()[link].a == from};
}

void append(Leg& leg, const Topology& t, int link) {
  const int from = leg.devices.back();
  leg.hops.push_back(hop_from(t, link, from));
  leg.devices.push_back(t.links()[link].other(from));
}

Leg single_link_leg(const Topology& t, int src, int link) {
  Leg leg{{src}, {}};
  append(leg, t, link);
  return leg;
}

}  // namespace

const char* to_string(RouteKind kind) {
  switch (kind) {
    case RouteKind::NvLink: return "nvlink";
    case RouteKind::NvSwitch: return "nvswitch";
    case RouteKind::TwoHopGpu: return "two_hop_gpu";
    case RouteKind::HostStaged: return "host_staged";
    case RouteKind::P2p: return "p2p";
    case RouteKind::Network: return "network";
  }
  return "?";
}

Seconds Leg::latency(const Topology& t) const {
  double total = 0;
  for (const Hop& h : hops) total += t.links()[h.link].latency.value;
  for (std::size_t i = 1; i + 1 < devices.size(); ++i) total += t.devices()[devices[i]].latency.value;
  return Seconds{total};
}

BytesPerSecond Leg::bandwidth(const Topology& t) const {
  double narrowest = std::numeric_limits<double>::infinity();
  for (const Hop& h : hops) {
    narrowest = std::min(narrowest, t.links()[h.link].effective_bandwidth().value);
  }
  return BytesPerSecond{narrowest};
}

Seconds Leg::copy_time(const Topology& t, Bytes bytes) const {
  return Seconds{latency(t).value + bytes.value / bandwidth(t).value};
}

std::vector<int> Route::devices() const {
  std::vector<int> out;
  for (const Leg& leg : legs) {
    const auto first = out.empty() ? leg.devices.begin() : leg.devices.begin() + 1;
    out.insert(out.end(), first, leg.devices.end());
  }
  return out;
}

Seconds Route::copy_time(const Topology& t, Bytes bytes) const {
  double total = 0;
  for (const Leg& leg : legs) total += leg.copy_time(t, bytes).value;
  return Seconds{total};
}

RoutingMode routing_mode_for(const Topology& machine, const std::string& name) {
  if (name.empty()) return machine.default_routing();
  const auto mode = routing_mode_from_string(name);
  if (!mode) {
    throw ConfigError(Origin{"--routing", 0},
                      unknown_name_message("routing mode", name, routing_mode_names()));
  }
  return *mode;
}

Router::Router(const Topology& topology, RoutingMode mode) : topology_(topology), mode_(mode) {
  const auto& devices = topology.devices();
  for (const Link& l : topology.links()) {
    // Half of each end's crossing latency: every device a path crosses is entered and left once.
    link_cost_.push_back(l.latency.value + kReferenceBytes / l.effective_bandwidth().value +
                         0.5 * (devices[l.a].latency.value + devices[l.b].latency.value));
  }
}

int Router::node_of(int device) const { return topology_.devices()[device].node; }

int Router::local(int device) const {
  const auto& fabric = topology_.fabric();
  return fabric ? device % fabric->devices_per_node : device;
}

Leg Router::shifted(const Leg& leg, int node) const {
  const auto& fabric = topology_.fabric();
  if (!fabric || node == 0) return leg;
  Leg out = leg;
  for (int& d : out.devices) d += node * fabric->devices_per_node;
  for (Hop& h : out.hops) h.link += node * fabric->links_per_node;
  return out;
}

Leg Router::cut_through(int src, int dst, bool allow_nvlink) const {
  const auto key = std::make_tuple(src, dst, allow_nvlink);
  if (auto it = path_cache_.find(key); it != path_cache_.end()) return it->second;
  const Graph& g = topology_.graph();
  const auto& links = topology_.links();
  const auto& devices = topology_.devices();
  const boost::filtered_graph<Graph, LinkFilter, DeviceFilter> view(
      g, LinkFilter{&topology_, allow_nvlink}, DeviceFilter{&topology_, src, dst, node_of(src)});
  std::vector<Graph::vertex_descriptor> pred(devices.size());
  std::vector<double> dist(devices.size());
  const auto vertex_ids = boost::get(boost::vertex_index, g);
  boost::dijkstra_shortest_paths(
      view, static_cast<Graph::vertex_descriptor>(src),
      boost::predecessor_map(boost::make_iterator_property_map(pred.begin(), vertex_ids))
          .distance_map(boost::make_iterator_property_map(dist.begin(), vertex_ids))
          .weight_map(boost::make_iterator_property_map(link_cost_.begin(),
                                                        boost::get(boost::edge_index, g))));
  Leg& leg = path_cache_[key];
  if (pred[dst] == static_cast<Graph::vertex_descriptor>(dst)) return leg;  // unreachable: empty

  std::vector<int> path{dst};
  while (path.back() != src) path.push_back(static_cast<int>(pred[path.back()]));
  std::reverse(path.begin(), path.end());
  leg.devices.push_back(src);
  for (std::size_t i = 1; i < path.size(); ++i) {
    for (int k : topology_.links_of(path[i - 1])) {
      const Link& l = links[k];
      if (l.other(path[i - 1]) == path[i] && (allow_nvlink || l.kind != LinkKind::NvLink)) {
        append(leg, topology_, k);
        break;
      }
    }
  }
  return leg;
}

Route Router::route_in_node(int src, int dst) const {
  const auto key = std::make_pair(src, dst);
  if (auto it = node_cache_.find(key); it != node_cache_.end()) return it->second;

  auto unreachable = [&](std::string_view how) {
    const Device& s = topology_.devices()[src];
    return ConfigError(s.origin, fmt::format("{} has no route to {} under routing '{}' ({})",
                                             s.name, topology_.devices()[dst].name,
                                             to_string(mode_), how));
  };
  Route route;
  const auto nvlink = topology_.nvlink_between(src, dst);
  if (mode_ != RoutingMode::Pcie && nvlink) {
    route = Route{RouteKind::NvLink, {single_link_leg(topology_, src, *nvlink)}};
  } else if (mode_ == RoutingMode::Pcie) {
    Leg leg = cut_through(src, dst, false);
    if (leg.devices.empty()) {
      throw unreachable("no path without NVLink: attach both GPUs through PCIe switches or CPUs, "
                        "or choose another routing mode");
    }
    route = Route{RouteKind::P2p, {std::move(leg)}};
  } else {
    // Two-hop: the GPU with NVLink to both ends whose narrower leg is widest.
    int best = -1;
    double best_bw = 0;
    if (mode_ == RoutingMode::TwoHopGpu) {
      for (int k : topology_.gpus()) {
        if (k == src || k == dst || node_of(k) != node_of(src)) continue;
        const auto first = topology_.nvlink_between(src, k);
        const auto second = topology_.nvlink_between(k, dst);
        if (!first || !second) continue;
        const double bw = std::min(topology_.links()[*first].effective_bandwidth().value,
                                   topology_.links()[*second].effective_bandwidth().value);
        if (bw > best_bw) {
          best = k;
          best_bw = bw;
        }
      }
    }
    if (best >= 0) {
      route = Route{RouteKind::TwoHopGpu,
                    {single_link_leg(topology_, src, *topology_.nvlink_between(src, best)),
                     single_link_leg(topology_, best, *topology_.nvlink_between(best, dst))}};
    } else {
      Leg leg = cut_through(src, dst, true);
      if (leg.devices.empty()) {
        throw unreachable("the GPUs share no path that avoids other GPUs: add a link, or choose "
                          "routing two_hop_gpu");
      }
      const auto crossing = std::find_if(leg.hops.begin(), leg.hops.end(), [&](const Hop& h) {
        return joins_sockets(topology_.links()[h.link].kind);
      });
      if (mode_ == RoutingMode::HostStaged && crossing != leg.hops.end()) {
        // No peer access across sockets: stage in the source socket's memory (the first CPU).
        const auto cpu = std::find_if(leg.devices.begin(), leg.devices.end(), [&](int d) {
          return topology_.devices()[d].kind == DeviceKind::Cpu;
        });
        const auto split = static_cast<std::size_t>(cpu - leg.devices.begin());
        Leg to_host{{leg.devices.begin(), leg.devices.begin() + split + 1},
                    {leg.hops.begin(), leg.hops.begin() + split}};
        Leg from_host{{leg.devices.begin() + split, leg.devices.end()},
                      {leg.hops.begin() + split, leg.hops.end()}};
        route = Route{RouteKind::HostStaged, {std::move(to_host), std::move(from_host)}};
      } else {
        const bool all_nvlink = std::all_of(leg.hops.begin(), leg.hops.end(), [&](const Hop& h) {
          return topology_.links()[h.link].kind == LinkKind::NvLink;
        });
        route = Route{all_nvlink ? RouteKind::NvSwitch : RouteKind::P2p, {std::move(leg)}};
      }
    }
  }
  node_cache_.emplace(key, route);
  return route;
}

std::pair<int, Leg> Router::nearest_nic(int local_gpu) const {
  const Fabric& fabric = *topology_.fabric();
  std::pair<int, Leg> nearest{-1, {}};
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < fabric.rail_nic.size(); ++r) {
    Leg leg = cut_through(local_gpu, fabric.rail_nic[r], true);
    if (leg.devices.empty()) continue;
    const double cost = leg.latency(topology_).value + 1e6 / leg.bandwidth(topology_).value;
    if (cost < best) {
      best = cost;
      nearest = {static_cast<int>(r), std::move(leg)};
    }
  }
  return nearest;
}

int Router::nearest_rail(int gpu) const {
  return topology_.fabric() ? nearest_nic(local(gpu)).first : -1;
}

Route Router::network_route(int src, int dst) const {
  const Fabric& fabric = *topology_.fabric();
  const int src_node = node_of(src), dst_node = node_of(dst);
  // The source GPU's nearest NIC picks the rail; the copy stays on that rail's plane.
  auto [rail, to_nic] = nearest_nic(local(src));
  const Device& s = topology_.devices()[src];
  if (rail < 0) {
    throw ConfigError(s.origin, fmt::format("{} reaches no NIC of its node (link it to a NIC "
                                            "through PCIe or a CPU)",
                                            s.name));
  }
  Leg from_nic = cut_through(fabric.rail_nic[rail], local(dst), true);
  if (from_nic.devices.empty()) {
    throw ConfigError(topology_.devices()[dst].origin,
                      fmt::format("{} cannot be reached from the NIC of rail {} (link it to that "
                                  "NIC through PCIe or a CPU)",
                                  topology_.devices()[dst].name, rail));
  }
  Leg leg = shifted(to_nic, src_node);
  const Fabric::Rail& plane = fabric.rails[rail];
  append(leg, topology_, plane.node_uplink[src_node]);
  const int src_leaf = plane.node_leaf[src_node], dst_leaf = plane.node_leaf[dst_node];
  if (src_leaf != dst_leaf) {
    // Static destination-based choices of spine and core, as InfiniBand's subnet manager
    // programs them (d-mod-k): a destination's packets always climb to the same switches.
    const int spines = fabric.spines_per_pod;
    const int spine = dst_node % spines;
    const int src_pod = src_leaf / fabric.leaves_per_pod, dst_pod = dst_leaf / fabric.leaves_per_pod;
    append(leg, topology_, plane.trunk[src_leaf][spine]);
    if (src_pod != dst_pod) {
      const int core = (dst_node / spines) % fabric.cores_per_group;
      append(leg, topology_, plane.core_trunk[src_pod * spines + spine][core]);
      append(leg, topology_, plane.core_trunk[dst_pod * spines + spine][core]);
    }
    append(leg, topology_, plane.trunk[dst_leaf][spine]);
  }
  append(leg, topology_, plane.node_uplink[dst_node]);
  const Leg tail = shifted(from_nic, dst_node);
  for (std::size_t i = 0; i < tail.hops.size(); ++i) {
    leg.hops.push_back(tail.hops[i]);
    leg.devices.push_back(tail.devices[i + 1]);
  }
  return Route{RouteKind::Network, {std::move(leg)}};
}

Route Router::route(int src_gpu, int dst_gpu) const {
  if (src_gpu == dst_gpu) throw std::logic_error("route from a GPU to itself");
  const int node = node_of(src_gpu);
  if (node != node_of(dst_gpu)) return network_route(src_gpu, dst_gpu);
  Route r = route_in_node(local(src_gpu), local(dst_gpu));
  for (Leg& leg : r.legs) leg = shifted(leg, node);
  return r;
}

void Router::check_all_pairs() const {
  std::vector<int> first_node;
  for (int g : topology_.gpus()) {
    if (node_of(g) == 0) first_node.push_back(g);
  }
  for (int a : first_node) {
    for (int b : first_node) {
      if (a != b) route(a, b);
    }
  }
  if (topology_.nodes() > 1) {
    const int other = topology_.fabric()->devices_per_node;  // node 1's copy of device 0
    for (int a : first_node) {
      route(a, a + other);
      route(a + other, a);
    }
  }
}

}  // namespace gpuscale::topo
