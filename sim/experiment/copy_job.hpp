// One copy between two GPUs of a machine, simulated alone: what `gpuscale topo route` prints
// beside the route's closed form (topo::Route::copy_time), so that a student sees the two agree.
//
// The copy is the replay's own machinery for one Transfer (collective_run.hpp simulate_copy):
// the route's legs on a SimGrid platform of just those legs, run store-and-forward by the
// DagExecutor, in a child process (isolated.hpp: one SimGrid engine per process).
#pragma once

#include <string>
#include <vector>

#include "topologies/src/routing.hpp"

namespace gpuscale::sim {

struct CopyJob {
  std::string topology = "dgx1-v100";           // a shipped machine or a .yaml file
  std::vector<std::string> topology_overrides;  // --set on the machine
  std::string routing;                          // a routing mode; empty: the machine's own
  std::string src, dst;                         // GPU names ("gpu0", "n1.gpu2")
  double bytes = 0;
};

struct CopyJobResult {
  topo::Topology machine;
  topo::RoutingMode routing = topo::RoutingMode::Direct;
  int src = 0, dst = 0;  // device indices
  topo::Route route;
  double simulated_s = 0;
};

// Throws ConfigError for bad input: an unknown machine, routing mode or device, a device that is
// not a GPU, the same GPU twice, or GPUs without a route under the routing mode.
CopyJobResult run_copy_job(const CopyJob& job);

}  // namespace gpuscale::sim
