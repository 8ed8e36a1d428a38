#include "sim/engine/lock_step.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>
#include <stdexcept>

namespace gpuscale::sim {
namespace {

// Counts transfers per (leg position, link, direction) over one depth.
class LinkLoads {
 public:
  explicit LinkLoads(std::size_t links) : links_(links) {}

  int& at(std::size_t leg, const topo::Hop& hop) {
    const std::size_t slot = (leg * links_ + static_cast<std::size_t>(hop.link)) * 2 + hop.forward;
    if (slot >= counts_.size()) counts_.resize(slot + 1, 0);
    if (counts_[slot] == 0) touched_.push_back(slot);
    return counts_[slot];
  }
  void clear() {
    for (std::size_t slot : touched_) counts_[slot] = 0;
    touched_.clear();
  }

 private:
  std::size_t links_;
  std::vector<int> counts_;
  std::vector<std::size_t> touched_;
};

// Each op's depth: 0 without deps, else one more than its deepest dep.
std::vector<int> op_depths(const coll::Schedule& schedule) {
  std::vector<int> depth(schedule.ops.size(), 0);
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    for (int d : schedule.ops[i].deps)
      depth[i] = std::max(depth[i], depth[static_cast<std::size_t>(d)] + 1);
  }
  return depth;
}

std::map<int, double> excess_latencies(const coll::Schedule& schedule,
                                       const topo::Topology& topology, const OpRoutes& routes) {
  std::map<int, std::pair<double, int>> sums;  // pipeline -> (route latencies, flows)
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const coll::Op& op = schedule.ops[i];
    if (op.kind != coll::Op::Kind::Transfer || op.pipeline < 0) continue;
    double route_latency_s = 0;
    for (const topo::Leg& leg : routes[i]->legs) route_latency_s += leg.latency(topology).value;
    auto& [latency_s, flows] = sums[op.pipeline];
    latency_s += route_latency_s;
    ++flows;
  }
  std::map<int, double> excess;
  for (const auto& [pipeline, sum] : sums) {
    const double paid = schedule.pipeline_step_latency_s.at(static_cast<std::size_t>(pipeline));
    excess[pipeline] = std::max(0.0, sum.first / sum.second - paid);
  }
  return excess;
}

}  // namespace

OpRoutes op_routes(const coll::Schedule& schedule, const RankRoute& route) {
  OpRoutes routes(schedule.ops.size(), nullptr);
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const coll::Op& op = schedule.ops[i];
    if (op.kind == coll::Op::Kind::Transfer) routes[i] = &route(op.src, op.dst);
  }
  return routes;
}

std::map<int, double> pipeline_excess_latencies(const coll::Schedule& schedule,
                                                const topo::Topology& topology,
                                                const RankRoute& route) {
  return excess_latencies(schedule, topology, op_routes(schedule, route));
}

std::vector<LockStepDepth> lock_step_depths(const coll::Schedule& schedule,
                                            const topo::Topology& topology,
                                            const OpRoutes& routes) {
  const std::vector<int> depth = op_depths(schedule);
  const int deepest = depth.empty() ? -1 : *std::max_element(depth.begin(), depth.end());
  std::vector<std::vector<std::size_t>> transfers(static_cast<std::size_t>(deepest + 1));
  std::vector<LockStepDepth> depths(static_cast<std::size_t>(deepest + 1));
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const coll::Op& op = schedule.ops[i];
    LockStepDepth& d = depths[static_cast<std::size_t>(depth[i])];
    switch (op.kind) {
      case coll::Op::Kind::Transfer:
        transfers[static_cast<std::size_t>(depth[i])].push_back(i);
        break;
      case coll::Op::Kind::Reduce:
        d.reduce_bytes = std::max(d.reduce_bytes, op.bytes);
        break;
      case coll::Op::Kind::Delay:
        d.transfer_s = std::max(d.transfer_s, op.seconds);
        break;
    }
  }
  const std::map<int, double> pipeline_excess_s = excess_latencies(schedule, topology, routes);
  const auto& links = topology.links();
  LinkLoads loads(links.size());
  for (std::size_t k = 0; k < depths.size(); ++k) {
    for (std::size_t i : transfers[k]) {
      const topo::Route& r = *routes[i];
      for (std::size_t leg = 0; leg < r.legs.size(); ++leg) {
        for (const topo::Hop& hop : r.legs[leg].hops) ++loads.at(leg, hop);
      }
    }
    for (std::size_t i : transfers[k]) {
      const coll::Op& op = schedule.ops[i];
      const topo::Route& r = *routes[i];
      double seconds = 0, route_latency_s = 0;
      for (std::size_t leg = 0; leg < r.legs.size(); ++leg) {
        double share = std::numeric_limits<double>::infinity();
        for (const topo::Hop& hop : r.legs[leg].hops) {
          share = std::min(share,
                           links[static_cast<std::size_t>(hop.link)].effective_bandwidth().value /
                               loads.at(leg, hop));
        }
        const double latency_s = r.legs[leg].latency(topology).value;
        route_latency_s += latency_s;
        seconds += latency_s + op.bytes / share;
      }
      if (op.pipeline < 0) {
        seconds += (op.latency_steps - 1) * route_latency_s;
      } else {
        seconds += std::max(0.0, op.latency_steps * pipeline_excess_s.at(op.pipeline) -
                                     route_latency_s);
      }
      depths[k].transfer_s = std::max(depths[k].transfer_s, seconds);
    }
    loads.clear();
  }
  return depths;
}

double lock_step_seconds(const std::vector<LockStepDepth>& depths, double reduce_bandwidth_Bps) {
  double total = 0;
  for (const LockStepDepth& d : depths) {
    const double reduce_s = reduce_bandwidth_Bps > 0 ? d.reduce_bytes / reduce_bandwidth_Bps : 0.0;
    total += std::max(d.transfer_s, reduce_s);
  }
  return total;
}

}  // namespace gpuscale::sim
