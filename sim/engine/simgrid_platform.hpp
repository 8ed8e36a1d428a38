// Turns a Topology into a SimGrid platform whose transfers cost
//     time = sum of latencies on the route + bytes / narrowest effective bandwidth,
// with concurrent flows sharing each link equally (max-min fairness).
//
// Model choices (measured in ../shared/simgrid-notes.md and
// tests/sim/engine/test_simgrid_platform.cpp):
//  - network/model:CM02 with network/crosstraffic:0 and network/TCP-gamma:0: no TCP window cap,
//    no 5% reverse-path load, no bandwidth/latency correction factors. NVLink, PCIe and
//    InfiniBand are credit-based links, not TCP.
//  - network/solver:fairbottleneck: flows crossing one link get equal shares. The default
//    max-min solver weighs flows by their route latency (TCP's RTT unfairness), which would give
//    a 1-hop NVLink copy far more than a PCIe copy sharing the same link.
//  - Each topology link is a split-duplex link (each direction its own bandwidth, lanes x lane
//    bandwidth x efficiency). A device with a crossing latency (a switch) adds a non-sharing
//    (FATPIPE) link holding only that latency to every route that crosses it.
//  - One zone with an explicit route per leg: we choose the routes (routing.hpp), SimGrid only
//    follows them. Only the legs asked for get routes, so a 512-GPU machine does not pay for
//    262k routes it never uses, and the zone stores those alone (SimGrid's Full zone keeps a
//    slot for every pair of its points: 2.1 GB for 16,384 GPUs).
//  - Only the GPUs and CPUs a leg joins, and those asked for, are hosts, and only the links a
//    leg crosses exist. Switches and NICs need no point of their own: routes are lists of links.
#pragma once

#include <simgrid/s4u.hpp>

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "topologies/src/routing.hpp"

namespace gpuscale::sim {

// Host speed in flop/s. Kernels are replayed as Execs whose "flops" are their duration in
// picoseconds: SimGrid's precision (1e-5 work units) then resolves 10 fs, far below any kernel.
inline constexpr double kHostSpeed = 1e12;

// Applies the model settings above; call before the platform is built.
void configure_network_model(simgrid::s4u::Engine& engine);

// The process's engine, with SimGrid's logging quiet and the model settings above applied.
std::unique_ptr<simgrid::s4u::Engine> make_engine();

class SimgridPlatform {
 public:
  // Builds the machine in the engine's root zone, with a route for each leg. The devices the legs
  // join are hosts, and so are `hosts` (device indices of GPUs or CPUs that run work without a
  // leg of their own).
  static SimgridPlatform build(const topo::Topology& topology, const std::vector<topo::Leg>& legs,
                               const std::vector<int>& hosts = {});

  // A GPU or CPU made a host by build(); throws std::logic_error for any other device.
  simgrid::s4u::Host* host(int device) const;

 private:
  std::map<int, simgrid::s4u::Host*> hosts_;
};

// Every leg of every route between two GPUs of the machine.
std::vector<topo::Leg> legs_between_all_gpus(const topo::Router& router,
                                             const topo::Topology& topology);

}  // namespace gpuscale::sim
