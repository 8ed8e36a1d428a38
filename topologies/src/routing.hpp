// Routes between GPUs under one routing mode (docs/topology-schema.md#routing).
//
// A route is one or more legs; each leg is a cut-through transfer over a chain of links (one flow
// that holds every link at once). Store-and-forward routes (two_hop_gpu, host_staged) have two
// legs: the copy lands in the intermediate device's memory, then is fetched onwards.
//
// Cut-through legs never pass through a GPU. Among the allowed paths, the one with the smallest
// sum over its links of latency + 1 MB / effective bandwidth (plus the latency of each device it
// crosses) wins: a stand-in for "fastest for a typical gradient chunk" that stays additive, so
// Dijkstra applies. Ties are broken by graph order, so routes are deterministic.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "topologies/src/topology.hpp"

namespace gpuscale::topo {

// NvSwitch: one cut-through leg over NVLinks only, through NVSwitch devices.
enum class RouteKind { NvLink, NvSwitch, TwoHopGpu, HostStaged, P2p, Network };
const char* to_string(RouteKind kind);

struct Hop {
  int link = 0;
  bool forward = true;  // travels from the link's `a` to its `b`
};

struct Leg {
  std::vector<int> devices;  // from source to destination, ends included
  std::vector<Hop> hops;     // devices.size() - 1 of them

  int src() const { return devices.front(); }
  int dst() const { return devices.back(); }
  Seconds latency(const Topology& t) const;           // links + devices crossed
  BytesPerSecond bandwidth(const Topology& t) const;  // narrowest effective link
  // A copy alone on the leg: latency + bytes / bandwidth (one cut-through flow).
  Seconds copy_time(const Topology& t, Bytes bytes) const;
};

struct Route {
  RouteKind kind = RouteKind::NvLink;
  std::vector<Leg> legs;

  // Every device from source to destination, the intermediate of a two-leg route once.
  std::vector<int> devices() const;
  // A copy alone on the route: the sum of its legs' copy times (store-and-forward: each leg
  // starts when the previous one has landed).
  Seconds copy_time(const Topology& t, Bytes bytes) const;
};

// The routing mode named `name` (routing_mode_names), or the machine's own when `name` is empty.
// Throws ConfigError at --routing for an unknown name.
RoutingMode routing_mode_for(const Topology& machine, const std::string& name);

class Router {
 public:
  Router(const Topology& topology, RoutingMode mode);

  RoutingMode mode() const { return mode_; }
  // The route between two GPUs (device indices). Throws ConfigError when none exists under this
  // mode, naming both GPUs and how to fix it.
  Route route(int src_gpu, int dst_gpu) const;
  // Checks that every GPU reaches every other (for a cluster: every pair within a node, and
  // each node's GPUs to another node's). Throws ConfigError for the first pair without a route.
  void check_all_pairs() const;
  // The rail whose NIC a GPU of a cluster reaches at the least cost: its network routes leave
  // through it. -1 where the machine has no fabric or the GPU reaches no NIC.
  int nearest_rail(int gpu) const;

 private:
  // The rail of nearest_rail and the leg from the GPU (a node-0 template index) to its NIC.
  std::pair<int, Leg> nearest_nic(int local_gpu) const;
  Route route_in_node(int src, int dst) const;  // both in node 0 (template indices)
  Route network_route(int src, int dst) const;
  Leg cut_through(int src, int dst, bool allow_nvlink) const;  // empty if none
  int node_of(int device) const;
  int local(int device) const;
  Leg shifted(const Leg& leg, int node) const;

  const Topology& topology_;
  RoutingMode mode_;
  std::vector<double> link_cost_;  // the additive path cost of each link (see above)
  // Routes are pure functions of their ends; a cluster's nodes share node 0's.
  mutable std::map<std::pair<int, int>, Route> node_cache_;
  mutable std::map<std::tuple<int, int, bool>, Leg> path_cache_;
};

}  // namespace gpuscale::topo
