#include "sim/engine/simgrid_platform.hpp"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

namespace gpuscale::sim {
namespace sg4 = simgrid::s4u;
namespace {

// A crossing-latency link must never limit bandwidth: switch fabrics are non-blocking ("full
// line rate on all ports", PLX ExpressLane briefs); FATPIPE keeps flows from sharing it.
constexpr double kUnlimitedBandwidth = 1e18;  // B/s

bool is_host(topo::DeviceKind kind) {
  return kind == topo::DeviceKind::Gpu || kind == topo::DeviceKind::Cpu;
}

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
  auto* zone = sg4::create_full_zone(topology.name());
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
