// One simulation on SimGrid: the engine, the machine's platform, the compiler that turns
// collective schedules into DAG nodes on it, and that DAG. The training replay, the pipeline
// (train), the trace replay and a lone collective each build one the same way:
//
//     PlatformNeeds needs;                              // what the platform must hold
//     for (const coll::Schedule& s : schedules) needs.add(s, router, gpus);
//     Simulation sim(topology, router, gpus, needs, reduction_at(reduce_Bps));
//     const NodeId end = sim.append(schedule, -1);      // or sim.dag().add(...) for kernels
//     const double seconds = sim.run();
//
// Contract: one Simulation per process at a time (SimGrid keeps one engine per process: wrap the
// caller in run_isolated). It is built in place, never moved (the compiler holds the platform), so
// a caller that knows its platform only later keeps it in a std::optional and emplaces it then.
#pragma once

#include <simgrid/s4u.hpp>

#include <functional>
#include <memory>
#include <vector>

#include "sim/collectives/schedule.hpp"
#include "sim/engine/dag_executor.hpp"
#include "sim/engine/schedule_nodes.hpp"
#include "sim/engine/simgrid_platform.hpp"
#include "topologies/src/routing.hpp"

namespace gpuscale::sim {

// What a simulation's platform must hold (SimgridPlatform::build): the legs its flows take, and
// as hosts the GPUs (or CPUs) that run work without a leg of their own, in the order given.
struct PlatformNeeds {
  std::vector<topo::Leg> legs;
  std::vector<int> hosts;

  // The legs of every Transfer of `schedule` over ranks `gpus` (device indices), and as hosts
  // the GPUs of every rank an op of it runs on.
  void add(const coll::Schedule& schedule, const topo::Router& router,
           const std::vector<int>& gpus);
};

// The GPU seconds of a reduction moving `bytes` of memory traffic.
using ReductionCost = std::function<double(double bytes)>;

// Reductions streaming memory at `bandwidth_Bps` (0: free).
ReductionCost reduction_at(double bandwidth_Bps);

class Simulation {
 public:
  // Creates the process's engine and builds the platform of `needs` on `topology`; collectives
  // run over ranks `gpus` (device indices) along `router`'s routes, each reduction costing
  // `reduce_seconds`. `topology` and `router` must outlive the simulation.
  Simulation(const topo::Topology& topology, const topo::Router& router, std::vector<int> gpus,
             const PlatformNeeds& needs, ReductionCost reduce_seconds);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  DagExecutor& dag() { return dag_; }
  const DagExecutor& dag() const { return dag_; }
  ScheduleCompiler& compiler() { return compiler_; }
  const ScheduleCompiler& compiler() const { return compiler_; }
  // A GPU or CPU the platform holds as a host (PlatformNeeds).
  simgrid::s4u::Host* host(int device) const { return platform_.host(device); }

  // ScheduleCompiler::append and append_lock_step on this simulation's DAG.
  DagExecutor::NodeId append(const coll::Schedule& schedule, DagExecutor::NodeId start) {
    return compiler_.append(dag_, schedule, start);
  }
  DagExecutor::NodeId append_lock_step(const coll::Schedule& schedule, DagExecutor::NodeId start,
                                       int reduce_rank) {
    return compiler_.append_lock_step(dag_, schedule, start, reduce_rank);
  }
  DagExecutor::NodeId append_lock_step(const ScheduleCompiler::LockStepCost& cost,
                                       DagExecutor::NodeId start, int reduce_rank) {
    return compiler_.append_lock_step(dag_, cost, start, reduce_rank);
  }

  // Runs the DAG until nothing is left to do; returns the simulated time then, seconds.
  double run();

 private:
  // In this order: the platform needs the engine, the compiler the platform, and the DAG's
  // activities go before the engine.
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  SimgridPlatform platform_;
  ScheduleCompiler compiler_;
  DagExecutor dag_;
};

}  // namespace gpuscale::sim
