// One depth of a lock-step schedule run as SimGrid runs its flows, in closed time steps instead
// of activities: for the depths whose flows do not start together where they share a link
// (lock_step.hpp), whose cost the share of the most loaded link does not give exactly.
//
// NCCL's trees over a leaf-spine fabric are the case in point: a node's NIC takes one child's
// flow across its leaf and another's across the spine, and SimGrid starts each flow's bytes after
// its own route latency, so the nearer child has the NIC to itself for a moment. Charging both
// the shared rate from the later start over-states a 100 MiB allreduce over 512 GPUs by 0.23 us.
//
// The model is SimGrid 3.32's on this platform (sim/engine/simgrid_platform.hpp: CM02, no TCP
// window, fair-bottleneck solver): a transfer's legs run in turn, each moving its bytes after its
// latency at the rate the solver gives it among the legs in flight, and the rates change only
// when a leg starts or ends. Between two such instants every rate is constant, so the depth is
// solved once per instant, not once per byte.
#pragma once

#include <vector>

#include "topologies/src/routing.hpp"

namespace gpuscale::sim {

struct DepthTransfer {
  const topo::Route* route = nullptr;
  double bytes = 0;
  double tail_s = 0;  // waited after the last leg: the latency steps its schedule charges
};

// One direction of one link, a constraint of SimGrid's sharing: a number below 2 x links.
std::size_t link_direction(const topo::Hop& hop);

// When the last of `transfers`, all starting at 0, has ended.
double fluid_depth_seconds(const std::vector<DepthTransfer>& transfers,
                           const topo::Topology& topology);

}  // namespace gpuscale::sim
