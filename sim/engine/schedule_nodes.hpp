// How a collective's schedule (sim/collectives) becomes DAG nodes on a machine: each Transfer
// follows the route between its two ranks' GPUs (store-and-forward legs in order, then
// latency_steps - 1 more route latencies, or for a pipeline's flow latency_steps of the
// pipeline's mean route latency beyond what the schedule paid per step, less its own), each
// Reduce is GPU time on its rank, each Delay a timer. One piece serves the training replay and
// single collectives alike.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/collectives/schedule.hpp"
#include "sim/engine/dag_executor.hpp"
#include "sim/engine/lock_step.hpp"
#include "sim/engine/simgrid_platform.hpp"
#include "topologies/src/routing.hpp"

namespace gpuscale::sim {

// The legs the platform needs for every Transfer of `schedule`, over ranks `gpus` (device indices).
std::vector<topo::Leg> schedule_legs(const coll::Schedule& schedule, const topo::Router& router,
                                     const std::vector<int>& gpus);

// The GPUs (device indices) of every rank an op of `schedule` sends, receives or reduces on:
// the platform's hosts for it.
std::vector<int> schedule_hosts(const coll::Schedule& schedule, const std::vector<int>& gpus);

// The index of a link direction in ScheduleCompiler::link_bytes().
inline size_t link_slot(int link, bool forward) { return static_cast<size_t>(link) * 2 + forward; }

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

  // What a lock-step schedule costs: its depths and the bytes it puts on each link direction,
  // kept per schedule, since an iteration repeats the same sizes, each costing O(ranks log ranks)
  // to evaluate. A caller that repeats a schedule may keep its cost and drop its ops.
  struct LockStepCost {
    std::string algorithm;
    std::vector<LockStepDepth> depths;
    std::vector<std::pair<size_t, double>> link_bytes;  // (link slot, bytes), the ones it uses
  };
  // The cost of `schedule`, evaluated the first time a schedule alike is asked for; it lives as
  // long as the compiler.
  const LockStepCost& lock_step_cost(const coll::Schedule& schedule);

  // For a lock-step schedule whose ranks all do alike (the replay under symmetry): appends its
  // depths (lock_step.hpp) one after another, each a delay for its transfers beside its largest
  // reduction on `reduce_rank`'s GPU, where it competes with that GPU's kernels. Counts every
  // transfer's bytes on its links as append does.
  DagExecutor::NodeId append_lock_step(DagExecutor& dag, const coll::Schedule& schedule,
                                       DagExecutor::NodeId start, int reduce_rank);
  // The same, from the schedule's cost (lock_step_cost).
  DagExecutor::NodeId append_lock_step(DagExecutor& dag, const LockStepCost& cost,
                                       DagExecutor::NodeId start, int reduce_rank);

  // Bytes each link direction has been given so far, at link_slot(link, forward).
  const std::vector<double>& link_bytes() const { return link_bytes_; }

  // A Transfer or Reduce node appended while recording, for timelines.
  struct AppendedOp {
    DagExecutor::NodeId node;
    coll::Op::Kind kind;
    int src, dst;  // ranks
    double bytes;
    std::string algorithm;
  };
  void record_ops() { record_ops_ = true; }
  const std::vector<AppendedOp>& appended_ops() const { return appended_ops_; }
  // The hops of leg `leg` of the route from rank `a` to rank `b`.
  const std::vector<topo::Hop>& leg_hops(int a, int b, size_t leg) {
    return route(a, b).route.legs[leg].hops;
  }

 private:
  struct PairRoute {
    topo::Route route;
    double latency_s = 0;
  };
  const PairRoute& route(int a, int b);
  // The route's legs as platform hosts: only flows need them, so a lock-step schedule's pairs
  // need no hosts (nor legs) on the platform.
  using HostLegs = std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>>;
  const HostLegs& host_legs(int a, int b);
  // route() as lock_step.hpp takes it.
  RankRoute rank_route() {
    return [this](int a, int b) -> const topo::Route& { return route(a, b).route; };
  }

  // The shape `schedule` shares with the schedules evaluated before it, made if none has it.
  const LockStepShape& lock_step_shape(const coll::Schedule& schedule);

  const topo::Topology& topology_;
  const topo::Router& router_;
  const SimgridPlatform& platform_;
  std::vector<int> gpus_;
  std::function<double(double)> reduce_seconds_;
  // By pair of ranks (pair_key): hashed, since a lock-step ring over 65,536 GPUs looks up
  // half a million pairs per evaluation, and a node's address never changes once made.
  static std::uint64_t pair_key(int a, int b) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32 |
           static_cast<std::uint32_t>(b);
  }
  std::unordered_map<std::uint64_t, PairRoute> routes_;
  std::unordered_map<std::uint64_t, HostLegs> host_legs_;
  std::vector<double> link_bytes_;
  // By algorithm, payload, op count, first transfer's source and bytes transferred.
  using LockStepKey = std::tuple<std::string, double, size_t, int, double>;
  std::map<LockStepKey, LockStepCost> lock_step_costs_;
  std::unordered_map<std::uint64_t, std::vector<LockStepShape>> lock_step_shapes_;  // by hash_of
  bool record_ops_ = false;
  std::vector<AppendedOp> appended_ops_;
};

}  // namespace gpuscale::sim
