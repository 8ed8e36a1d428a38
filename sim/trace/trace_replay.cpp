#include "sim/trace/trace_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "sim/collectives/registry.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::sim {
namespace {

using interop::TraceGraph;
using interop::TraceNode;
using NodeId = DagExecutor::NodeId;
using Interval = std::pair<double, double>;

// The intervals merged into disjoint ones, in order.
std::vector<Interval> merged(std::vector<Interval> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<Interval> out;
  for (const Interval& s : spans) {
    if (!out.empty() && s.first <= out.back().second) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

double length(const std::vector<Interval>& disjoint) {
  double total = 0;
  for (const auto& [a, b] : disjoint) total += b - a;
  return total;
}

// The time two sets of disjoint, ordered intervals share.
double overlap(const std::vector<Interval>& x, const std::vector<Interval>& y) {
  double total = 0;
  for (size_t i = 0, j = 0; i < x.size() && j < y.size();) {
    total += std::max(0.0, std::min(x[i].second, y[j].second) - std::max(x[i].first, y[j].first));
    (x[i].second < y[j].second ? i : j)++;
  }
  return total;
}

class TraceReplay {
 public:
  TraceReplay(const TraceGraph& graph, const TraceMachine& m)
      : graph_(graph),
        m_(m),
        ranks_(static_cast<int>(m.placement.gpus.size())),
        protocol_(*m.machine, *m.router, m.placement.gpus, m.placement.rings,
                  m.placement.node_of_rank, m.protocol) {
    for (const TraceNode& node : graph_.nodes) {
      if (node.kind == TraceNode::Kind::Send || node.kind == TraceNode::Kind::Recv) {
        check_peer(node);
      }
    }
  }

  TraceResult run() {
    PlatformNeeds needs;
    needs.hosts.push_back(m_.placement.gpus[0]);
    for (const TraceNode& node : graph_.nodes) {
      if (node.kind == TraceNode::Kind::Compute || node.kind == TraceNode::Kind::Delay) continue;
      const coll::Schedule& s = schedule_of(node);
      if (!evaluated_from_link_loads(s, ranks_)) needs.add(s, *m_.router, m_.placement.gpus);
    }
    Simulation sim(*m_.machine, *m_.router, m_.placement.gpus, needs,
                   reduction_at(m_.reduce_bandwidth_Bps));
    DagExecutor& dag = sim.dag();
    TraceResult result;
    std::vector<NodeId> end(graph_.nodes.size());
    std::vector<std::pair<NodeId, NodeId>> kernels, communications;  // (start, end) nodes
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const TraceNode& node = graph_.nodes[i];
      std::vector<NodeId> deps;
      for (int d : node.deps) deps.push_back(end[static_cast<size_t>(d)]);
      switch (node.kind) {
        case TraceNode::Kind::Compute: {
          if (node.seconds <= 0) {
            end[i] = dag.add({}, deps);
            break;
          }
          DagExecutor::Spec spec;
          spec.kind = DagExecutor::Kind::Compute;
          spec.host = sim.host(m_.placement.gpus[0]);
          spec.seconds = node.seconds;
          end[i] = dag.add(std::move(spec), deps);
          kernels.push_back({end[i], end[i]});
          ++result.kernels;
          break;
        }
        case TraceNode::Kind::Delay:
          end[i] = dag.add({DagExecutor::Kind::Delay, nullptr, node.seconds, {}, 0, 0}, deps);
          break;
        default: {
          const coll::Schedule& s = schedule_of(node);
          const NodeId start = dag.add({}, deps);
          end[i] = evaluated_from_link_loads(s, ranks_) ? sim.append_lock_step(s, start, 0)
                                                        : sim.append(s, start);
          communications.push_back({start, end[i]});
          ++(node.kind == TraceNode::Kind::Collective ? result.collectives : result.messages);
        }
      }
    }
    const double end_s = sim.run();

    const auto spans = [&](const std::vector<std::pair<NodeId, NodeId>>& nodes, bool kernel) {
      std::vector<Interval> out;
      for (const auto& [a, b] : nodes) {
        out.push_back({kernel ? dag.start_time(a) : dag.end_time(a), dag.end_time(b)});
      }
      return merged(std::move(out));
    };
    const std::vector<Interval> busy = spans(kernels, true), comm = spans(communications, false);
    result.iteration_s = end_s;
    result.compute_s = length(busy);
    result.communication_s = length(comm);
    result.exposed_communication_s = result.communication_s - overlap(comm, busy);
    result.activities = dag.activities_started();
    return result;
  }

 private:
  void check_peer(const TraceNode& node) const {
    if (node.peer > 0 && node.peer < ranks_) return;
    throw ConfigError({graph_.source, 0},
                      fmt::format("node '{}' {} rank {}, but {} (run it on at least {} GPUs)",
                                  node.name,
                                  node.kind == TraceNode::Kind::Send ? "sends to" : "receives from",
                                  node.peer,
                                  node.peer == 0 ? "rank 0 is the one replayed"
                                                 : fmt::format("the job has {} GPUs", ranks_),
                                  std::max(node.peer + 1, 2)));
  }

  std::string algorithm_for(coll::Collective kind) const {
    return coll::implements(coll::find_algorithm(m_.algorithm), kind) ? m_.algorithm
                                                                      : "nccl_ring";
  }

  // Built once per collective, size and peer: an iteration repeats them.
  const coll::Schedule& schedule_of(const TraceNode& node) {
    const auto key = std::tuple(node.kind, node.collective, node.bytes, node.peer);
    if (const auto it = schedules_.find(key); it != schedules_.end()) return it->second;
    coll::Schedule s;
    if (node.kind == TraceNode::Kind::Collective) {
      coll::CollectiveRequest request;
      request.kind = node.collective;
      request.bytes = node.bytes;
      request.ranks = ranks_;
      request.rings = m_.placement.rings;
      request.node_of_rank = m_.placement.node_of_rank;
      protocol_.fill(request);
      s = coll::build_schedule(algorithm_for(node.collective), request);
    } else {
      const bool send = node.kind == TraceNode::Kind::Send;
      s = coll::Schedule{"copy", ranks_, node.bytes, {}};
      coll::Op copy;
      copy.src = send ? 0 : node.peer;
      copy.dst = send ? node.peer : 0;
      copy.bytes = node.bytes;
      s.ops.push_back(copy);
    }
    return schedules_.emplace(key, std::move(s)).first->second;
  }

  const TraceGraph& graph_;
  const TraceMachine& m_;
  int ranks_;
  ProtocolChoice protocol_;
  std::map<std::tuple<TraceNode::Kind, coll::Collective, double, int>, coll::Schedule> schedules_;
};

}  // namespace

TraceResult replay_trace(const interop::TraceGraph& graph, const TraceMachine& machine) {
  return TraceReplay(graph, machine).run();
}

}  // namespace gpuscale::sim
