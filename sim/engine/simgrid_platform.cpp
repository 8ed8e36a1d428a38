#include "sim/engine/simgrid_platform.hpp"

#include <fmt/format.h>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace gpuscale::sim {
namespace sg4 = simgrid::s4u;
namespace {

// A crossing-latency link must never limit bandwidth: switch fabrics are non-blocking ("full
// line rate on all ports", PLX ExpressLane briefs); FATPIPE keeps flows from sharing it.
constexpr double kUnlimitedBandwidth = 1e18;  // B/s

bool is_host(topo::DeviceKind kind) {
  return kind == topo::DeviceKind::Gpu || kind == topo::DeviceKind::Cpu;
}

// The root zone: the one-way routes it was given, each pair's, and nothing for the other pairs.
// SimGrid's Full zone keeps a slot for every pair of its points: 16,384² slots (2.1 GB, a second
// of zeroed pages) for a binomial tree over 16,384 GPUs that routes 32,766 pairs.
class GivenRoutesZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  using NetPoint = simgrid::kernel::routing::NetPoint;
  explicit GivenRoutesZone(const std::string& name) : NetZoneImpl(name) {}

  // build() declares each pair's route once, one way, without gateways.
  void add_route(NetPoint* src, NetPoint* dst, NetPoint* /*gw_src*/, NetPoint* /*gw_dst*/,
                 const std::vector<sg4::LinkInRoute>& links, bool /*symmetrical*/) override {
    GivenRoute route{get_link_list_impl(links, false), 0.0};
    for (const sg4::LinkInRoute& link : links) route.latency_s += link.get_link()->get_latency();
    routes_[pair_key(src, dst)] = std::move(route);
  }

  void get_local_route(const NetPoint* src, const NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override {
    const auto it = routes_.find(pair_key(src, dst));
    if (it == routes_.end()) {
      throw std::logic_error(fmt::format("no route from {} to {} on the platform",
                                         src->get_name(), dst->get_name()));
    }
    into->link_list_.insert(into->link_list_.end(), it->second.links.begin(),
                            it->second.links.end());
    if (latency != nullptr) *latency += it->second.latency_s;
  }

 private:
  struct GivenRoute {
    std::vector<simgrid::kernel::resource::StandardLinkImpl*> links;
    double latency_s = 0;
  };
  static std::uint64_t pair_key(const NetPoint* src, const NetPoint* dst) {
    return (static_cast<std::uint64_t>(src->id()) << 32) | dst->id();
  }
  std::unordered_map<std::uint64_t, GivenRoute> routes_;
};

}  // namespace

void configure_network_model(sg4::Engine& engine) {
  engine.set_config("network/model:CM02");
  engine.set_config("network/crosstraffic:0");
  engine.set_config("network/TCP-gamma:0");
  engine.set_config("network/solver:fairbottleneck");
}

std::unique_ptr<sg4::Engine> make_engine() {
  int argc = 2;
  char arg0[] = "gpuscale";
  char arg1[] = "--log=root.thres:critical";
  char* argv[] = {arg0, arg1, nullptr};
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  configure_network_model(*engine);
  return engine;
}

SimgridPlatform SimgridPlatform::build(const topo::Topology& topology,
                                       const std::vector<topo::Leg>& legs,
                                       const std::vector<int>& hosts) {
  SimgridPlatform platform;
  sg4::NetZone* zone = (new GivenRoutesZone(topology.name()))->get_iface();
  const auto& devices = topology.devices();
  const auto& links = topology.links();

  std::vector<simgrid::kernel::routing::NetPoint*> netpoints(devices.size(), nullptr);
  auto netpoint = [&](int device) {
    auto& point = netpoints[static_cast<std::size_t>(device)];
    if (point == nullptr) {
      const topo::Device& d = devices[static_cast<std::size_t>(device)];
      if (!is_host(d.kind)) {
        throw std::logic_error(fmt::format("device {} is not a GPU or CPU", d.name));
      }
      sg4::Host* host = zone->create_host(d.name, kHostSpeed);
      platform.hosts_[device] = host;
      point = host->get_netpoint();
    }
    return point;
  };
  std::vector<sg4::Link*> crossing(devices.size(), nullptr);
  auto crossing_link = [&](int device) {
    const topo::Device& d = devices[static_cast<std::size_t>(device)];
    auto& link = crossing[static_cast<std::size_t>(device)];
    if (link == nullptr && d.latency.value > 0) {
      link = zone->create_link(d.name + ".crossing", kUnlimitedBandwidth)
                 ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                 ->set_latency(d.latency.value);
    }
    return link;
  };
  std::vector<sg4::SplitDuplexLink*> duplex(links.size(), nullptr);
  auto duplex_link = [&](int k) {
    auto& link = duplex[static_cast<std::size_t>(k)];
    if (link == nullptr) {
      const topo::Link& l = links[static_cast<std::size_t>(k)];
      link = zone->create_split_duplex_link(l.id, l.effective_bandwidth().value);
      link->set_latency(l.latency.value);
    }
    return link;
  };

  for (int device : hosts) netpoint(device);
  using Direction = sg4::LinkInRoute::Direction;
  std::set<std::pair<int, int>> routed;
  for (const topo::Leg& leg : legs) {
    if (!routed.insert({leg.src(), leg.dst()}).second) continue;
    if (!is_host(devices[leg.src()].kind) || !is_host(devices[leg.dst()].kind)) {
      throw std::logic_error(fmt::format("leg {} -> {} does not join two hosts",
                                         devices[leg.src()].name, devices[leg.dst()].name));
    }
    std::vector<sg4::LinkInRoute> route;
    for (std::size_t h = 0; h < leg.hops.size(); ++h) {
      if (h > 0) {
        sg4::Link* switch_latency = crossing_link(leg.devices[h]);
        if (switch_latency != nullptr) route.emplace_back(switch_latency);
      }
      route.emplace_back(duplex_link(leg.hops[h].link),
                         leg.hops[h].forward ? Direction::UP : Direction::DOWN);
    }
    zone->add_route(netpoint(leg.src()), netpoint(leg.dst()), nullptr, nullptr, route, false);
  }
  zone->seal();
  return platform;
}

sg4::Host* SimgridPlatform::host(int device) const {
  const auto it = hosts_.find(device);
  if (it == hosts_.end()) throw std::logic_error("device is not a SimGrid host");
  return it->second;
}

std::vector<topo::Leg> legs_between_all_gpus(const topo::Router& router,
                                             const topo::Topology& topology) {
  std::vector<topo::Leg> legs;
  for (int a : topology.gpus()) {
    for (int b : topology.gpus()) {
      if (a == b) continue;
      for (topo::Leg& leg : router.route(a, b).legs) legs.push_back(std::move(leg));
    }
  }
  return legs;
}

}  // namespace gpuscale::sim
