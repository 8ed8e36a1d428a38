#include "sim/replay/schedule_nodes.hpp"

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

ScheduleCompiler::ScheduleCompiler(const topo::Topology& topology, const topo::Router& router,
                                   const SimgridPlatform& platform, std::vector<int> gpus,
                                   std::function<double(double)> reduce_seconds)
    : topology_(topology), router_(router), platform_(platform), gpus_(std::move(gpus)),
      reduce_seconds_(std::move(reduce_seconds)) {}

const ScheduleCompiler::PairRoute& ScheduleCompiler::route(int a, int b) {
  auto [it, fresh] = routes_.try_emplace({a, b});
  if (fresh) {
    const topo::Route r = router_.route(gpus_[static_cast<size_t>(a)], gpus_[static_cast<size_t>(b)]);
    for (const topo::Leg& leg : r.legs) {
      it->second.legs.emplace_back(platform_.host(leg.src()), platform_.host(leg.dst()));
      it->second.latency_s += leg.latency(topology_).value;
      it->second.leg_hops.push_back(leg.hops);
    }
  }
  return it->second;
}

DagExecutor::NodeId ScheduleCompiler::append(DagExecutor& dag, const coll::Schedule& schedule,
                                             DagExecutor::NodeId start) {
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
        spec.legs = r.legs;
        spec.bytes = op.bytes;
        spec.post_delay = (op.latency_steps - 1) * r.latency_s;
        for (const auto& hops : r.leg_hops) {
          for (const topo::Hop& hop : hops) link_bytes_[{hop.link, hop.forward}] += op.bytes;
        }
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

}  // namespace gpuscale::sim
