#include "sim/engine/schedule_nodes.hpp"

#include <algorithm>
#include <set>

namespace gpuscale::sim {

std::vector<topo::Leg> schedule_legs(const coll::Schedule& schedule, const topo::Router& router,
                                     const std::vector<int>& gpus) {
  std::set<std::pair<int, int>> pairs;
  for (const coll::Op& op : schedule.ops) {
    if (op.kind == coll::Op::Kind::Transfer) pairs.insert({op.src, op.dst});
  }
  std::vector<topo::Leg> legs;
  for (const auto& [a, b] : pairs) {
    for (topo::Leg& leg : router.route(gpus[static_cast<size_t>(a)], gpus[static_cast<size_t>(b)]).legs) {
      legs.push_back(std::move(leg));
    }
  }
  return legs;
}

std::vector<int> schedule_hosts(const coll::Schedule& schedule, const std::vector<int>& gpus) {
  std::set<int> ranks;
  for (const coll::Op& op : schedule.ops) {
    if (op.kind == coll::Op::Kind::Delay) continue;
    ranks.insert(op.src);
    if (op.kind == coll::Op::Kind::Transfer) ranks.insert(op.dst);
  }
  std::vector<int> hosts;
  for (int rank : ranks) hosts.push_back(gpus[static_cast<size_t>(rank)]);
  return hosts;
}

namespace {

// Adds `bytes` to every link direction `route` crosses, at link_slot.
void add_route_bytes(std::vector<double>& link_bytes, const topo::Route& route, double bytes) {
  for (const topo::Leg& leg : route.legs) {
    for (const topo::Hop& hop : leg.hops) link_bytes[link_slot(hop.link, hop.forward)] += bytes;
  }
}

}  // namespace

ScheduleCompiler::ScheduleCompiler(const topo::Topology& topology, const topo::Router& router,
                                   const SimgridPlatform& platform, std::vector<int> gpus,
                                   std::function<double(double)> reduce_seconds)
    : topology_(topology), router_(router), platform_(platform), gpus_(std::move(gpus)),
      reduce_seconds_(std::move(reduce_seconds)), link_bytes_(topology.links().size() * 2, 0.0) {}

const ScheduleCompiler::PairRoute& ScheduleCompiler::route(int a, int b) {
  auto [it, fresh] = routes_.try_emplace(pair_key(a, b));
  if (fresh) {
    PairRoute& r = it->second;
    r.route = router_.route(gpus_[static_cast<size_t>(a)], gpus_[static_cast<size_t>(b)]);
    for (const topo::Leg& leg : r.route.legs) r.latency_s += leg.latency(topology_).value;
  }
  return it->second;
}

const ScheduleCompiler::HostLegs& ScheduleCompiler::host_legs(int a, int b) {
  auto [it, fresh] = host_legs_.try_emplace(pair_key(a, b));
  if (fresh) {
    for (const topo::Leg& leg : route(a, b).route.legs) {
      it->second.emplace_back(platform_.host(leg.src()), platform_.host(leg.dst()));
    }
  }
  return it->second;
}

DagExecutor::NodeId ScheduleCompiler::append(DagExecutor& dag, const coll::Schedule& schedule,
                                             DagExecutor::NodeId start) {
  const std::map<int, double> pipeline_excess_s =
      pipeline_excess_latencies(schedule, topology_, rank_route());
  std::vector<DagExecutor::NodeId> ids;
  ids.reserve(schedule.ops.size());
  for (const coll::Op& op : schedule.ops) {
    std::vector<DagExecutor::NodeId> deps;
    for (int d : op.deps) deps.push_back(ids[static_cast<size_t>(d)]);
    if (deps.empty() && start >= 0) deps.push_back(start);
    DagExecutor::Spec spec;
    switch (op.kind) {
      case coll::Op::Kind::Transfer: {
        const PairRoute& r = route(op.src, op.dst);
        spec.kind = DagExecutor::Kind::Transfer;
        spec.legs = host_legs(op.src, op.dst);
        spec.bytes = op.bytes;
        // The flow pays its own route's latency once; the rest of its steps come after it. A
        // pipeline's step costs the larger of its mean route latency and the latency the
        // schedule already paid for it, so only the excess remains (at least the route's own).
        if (op.pipeline < 0) {
          spec.post_delay = (op.latency_steps - 1) * r.latency_s;
        } else {
          spec.post_delay =
              std::max(0.0, op.latency_steps * pipeline_excess_s.at(op.pipeline) - r.latency_s);
        }
        add_route_bytes(link_bytes_, r.route, op.bytes);
        break;
      }
      case coll::Op::Kind::Reduce:
        spec.kind = DagExecutor::Kind::Compute;
        spec.host = platform_.host(gpus_[static_cast<size_t>(op.src)]);
        spec.seconds = reduce_seconds_(op.bytes);
        break;
      case coll::Op::Kind::Delay:
        spec.seconds = op.seconds;
        break;
    }
    ids.push_back(dag.add(std::move(spec), deps));
    if (record_ops_ && op.kind != coll::Op::Kind::Delay) {
      appended_ops_.push_back({ids.back(), op.kind, op.src, op.dst, op.bytes, schedule.algorithm});
    }
  }
  if (ids.empty()) return start;
  return dag.add({}, ids);
}

const ScheduleCompiler::LockStepCost& ScheduleCompiler::lock_step_cost(
    const coll::Schedule& schedule) {
  // One algorithm's schedules of one size and op count differ in their root, which names their
  // first transfer's source, or in their collective, which changes the bytes they move (a ring's
  // allreduce and allgather have as many flows).
  int first_src = -1;
  double transfer_bytes = 0;
  for (const coll::Op& op : schedule.ops) {
    if (op.kind != coll::Op::Kind::Transfer) continue;
    if (first_src < 0) first_src = op.src;
    transfer_bytes += op.bytes;
  }
  auto [it, fresh] = lock_step_costs_.try_emplace(LockStepKey{
      schedule.algorithm, schedule.payload_bytes, schedule.ops.size(), first_src, transfer_bytes});
  if (!fresh) return it->second;
  LockStepCost& cost = it->second;
  cost.algorithm = schedule.algorithm;
  const LockStepShape& shape = lock_step_shape(schedule);
  cost.depths = shape.depths(schedule);
  std::vector<double> bytes(link_bytes_.size(), 0.0);
  shape.add_link_bytes(schedule, bytes);
  for (size_t slot = 0; slot < bytes.size(); ++slot) {
    if (bytes[slot] > 0) cost.link_bytes.emplace_back(slot, bytes[slot]);
  }
  return cost;
}

const LockStepShape& ScheduleCompiler::lock_step_shape(const coll::Schedule& schedule) {
  const std::vector<LockStepShape::Place> places = LockStepShape::places_of(schedule);
  std::vector<LockStepShape>& same_hash = lock_step_shapes_[LockStepShape::hash_of(places)];
  for (const LockStepShape& shape : same_hash) {
    if (shape.fits(places)) return shape;
  }
  routes_.reserve(routes_.size() + schedule.ops.size());  // a tree over 16,384 GPUs: 524,288 pairs
  return same_hash.emplace_back(schedule, topology_, op_routes(schedule, rank_route()));
}

DagExecutor::NodeId ScheduleCompiler::append_lock_step(DagExecutor& dag,
                                                       const coll::Schedule& schedule,
                                                       DagExecutor::NodeId start,
                                                       int reduce_rank) {
  return append_lock_step(dag, lock_step_cost(schedule), start, reduce_rank);
}

DagExecutor::NodeId ScheduleCompiler::append_lock_step(DagExecutor& dag, const LockStepCost& cost,
                                                       DagExecutor::NodeId start,
                                                       int reduce_rank) {
  for (const auto& [slot, bytes] : cost.link_bytes) link_bytes_[slot] += bytes;
  DagExecutor::NodeId previous = start;
  for (const LockStepDepth& depth : cost.depths) {
    std::vector<DagExecutor::NodeId> deps;
    if (previous >= 0) deps.push_back(previous);
    std::vector<DagExecutor::NodeId> parts;
    if (depth.transfer_s > 0) {
      parts.push_back(
          dag.add({DagExecutor::Kind::Delay, nullptr, depth.transfer_s, {}, 0, 0}, deps));
    }
    if (depth.reduce_bytes > 0) {
      DagExecutor::Spec reduce;
      reduce.kind = DagExecutor::Kind::Compute;
      reduce.host = platform_.host(gpus_[static_cast<size_t>(reduce_rank)]);
      reduce.seconds = reduce_seconds_(depth.reduce_bytes);
      parts.push_back(dag.add(std::move(reduce), deps));
      if (record_ops_) {
        appended_ops_.push_back({parts.back(), coll::Op::Kind::Reduce, reduce_rank, -1,
                                 depth.reduce_bytes, cost.algorithm});
      }
    }
    if (!parts.empty()) previous = dag.add({}, parts);
  }
  return previous;
}

}  // namespace gpuscale::sim
