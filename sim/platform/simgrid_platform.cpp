#include "sim/platform/simgrid_platform.hpp"

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
                                       const std::vector<topo::Leg>& legs) {
  SimgridPlatform platform;
  auto* zone = sg4::create_full_zone(topology.name());
  const auto& devices = topology.devices();
  const auto& links = topology.links();

  std::vector<simgrid::kernel::routing::NetPoint*> netpoints(devices.size(), nullptr);
  std::vector<sg4::Link*> crossing(devices.size(), nullptr);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const topo::Device& d = devices[i];
    if (is_host(d.kind)) {
      sg4::Host* host = zone->create_host(d.name, kHostSpeed);
      platform.hosts_[static_cast<int>(i)] = host;
      netpoints[i] = host->get_netpoint();
    } else {
      netpoints[i] = zone->create_router(d.name);
    }
    if (d.latency.value > 0) {
      crossing[i] = zone->create_link(d.name + ".crossing", kUnlimitedBandwidth)
                        ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                        ->set_latency(d.latency.value);
    }
  }

  std::vector<sg4::SplitDuplexLink*> duplex(links.size(), nullptr);
  for (std::size_t k = 0; k < links.size(); ++k) {
    const topo::Link& l = links[k];
    duplex[k] = zone->create_split_duplex_link(l.id, l.effective_bandwidth().value);
    duplex[k]->set_latency(l.latency.value);
  }

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
      if (h > 0 && crossing[leg.devices[h]] != nullptr) route.emplace_back(crossing[leg.devices[h]]);
      route.emplace_back(duplex[leg.hops[h].link],
                         leg.hops[h].forward ? Direction::UP : Direction::DOWN);
    }
    zone->add_route(netpoints[leg.src()], netpoints[leg.dst()], nullptr, nullptr, route, false);
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
