// How a collective's schedule (sim/collectives) becomes DAG nodes on a machine: each Transfer
// follows the route between its two ranks' GPUs (store-and-forward legs in order, then
// latency_steps - 1 more route latencies), each Reduce is GPU time on its rank, each Delay a
// timer. One piece serves the training replay and single collectives alike.
#pragma once

#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "sim/collectives/schedule.hpp"
#include "sim/platform/simgrid_platform.hpp"
#include "sim/replay/dag_executor.hpp"
#include "topologies/src/routing.hpp"

namespace gpuscale::sim {

// The legs the platform needs for every Transfer of `schedule`, over ranks `gpus` (device indices).
std::vector<topo::Leg> schedule_legs(const coll::Schedule& schedule, const topo::Router& router,
                                     const std::vector<int>& gpus);

class ScheduleCompiler {
 public:
  // `reduce_seconds(bytes)`: the GPU time of a reduction moving `bytes`.
  ScheduleCompiler(const topo::Topology& topology, const topo::Router& router,
                   const SimgridPlatform& platform, std::vector<int> gpus,
                   std::function<double(double)> reduce_seconds);

  // Appends the ops of `schedule`, those without deps after `start` (-1: at once); returns the
  // node that ends when all of them have (`start` for an empty schedule).
  DagExecutor::NodeId append(DagExecutor& dag, const coll::Schedule& schedule,
                             DagExecutor::NodeId start);

  // Bytes each link direction (link index, forward) has been given so far.
  const std::map<std::pair<int, bool>, double>& link_bytes() const { return link_bytes_; }

 private:
  struct PairRoute {
    std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>> legs;
    double latency_s = 0;
    std::vector<topo::Hop> hops;
  };
  const PairRoute& route(int a, int b);

  const topo::Topology& topology_;
  const topo::Router& router_;
  const SimgridPlatform& platform_;
  std::vector<int> gpus_;
  std::function<double(double)> reduce_seconds_;
  std::map<std::pair<int, int>, PairRoute> routes_;
  std::map<std::pair<int, bool>, double> link_bytes_;
};

}  // namespace gpuscale::sim
