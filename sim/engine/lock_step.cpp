#include "sim/engine/lock_step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <span>
#include <utility>
#include <stdexcept>

#include "sim/engine/fluid_depth.hpp"

namespace gpuscale::sim {
namespace {

// Route latencies summed in different orders differ in their last bits.
constexpr double kSameStart_s = 1e-12;

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


// A transfer of a depth as the closed form sees it: its first leg's latency, its share of that
// leg's most loaded link direction, the latency steps after its last leg, and its end.
struct ClosedFormEnd {
  std::size_t op = 0;
  double start_s = 0;
  double share = 0;
  topo::Hop narrowest;
  double tail_s = 0;
  double end_s = 0;
};

// Indices into a depth's ClosedFormEnds.
using TransferGroup = std::span<const std::size_t>;

std::size_t latest_of(const std::vector<ClosedFormEnd>& ends, const TransferGroup& group) {
  return *std::max_element(group.begin(), group.end(), [&](std::size_t a, std::size_t b) {
    return ends[a].end_s < ends[b].end_s;
  });
}

bool crosses(const topo::Route& route, const topo::Hop& hop) {
  return std::any_of(route.legs.front().hops.begin(), route.legs.front().hops.end(),
                     [&](const topo::Hop& h) { return h.link == hop.link && h.forward == hop.forward; });
}

// Whether the closed form's latest end in `group` is when SimGrid ends the group: where its
// transfers have one leg each, and every transfer through the latest one's narrowest link
// direction starts with it, carries its bytes and has no narrower share elsewhere. Each of them
// then gets at least that share (max-min sharing never gives a flow less than its narrowest
// share) and together no more than the link, so exactly that, from their common start to their
// common end; every other transfer ends by its own closed form, no later.
bool ends_together(const coll::Schedule& schedule, const OpRoutes& routes,
                   const std::vector<ClosedFormEnd>& ends, const TransferGroup& group) {
  for (std::size_t j : group) {
    if (routes[ends[j].op]->legs.size() != 1) return false;
  }
  const ClosedFormEnd& latest = ends[latest_of(ends, group)];
  for (std::size_t j : group) {
    const ClosedFormEnd& other = ends[j];
    if (!crosses(*routes[other.op], latest.narrowest)) continue;
    if (schedule.ops[other.op].bytes != schedule.ops[latest.op].bytes ||
        other.share < latest.share || std::abs(other.start_s - latest.start_s) > kSameStart_s)
      return false;
  }
  return true;
}

// The depth's transfers (indices into `ends`) ordered by the group of them that shares link
// directions, directly or through others, and where each group begins (and one past the last):
// max-min sharing settles each group's rates apart from the others'.
struct SharingGroups {
  std::vector<std::size_t> transfers;
  std::vector<std::size_t> begins;
  std::size_t size() const { return begins.size() - 1; }
  TransferGroup operator[](std::size_t g) const {
    return {transfers.data() + begins[g], begins[g + 1] - begins[g]};
  }
};

SharingGroups sharing_groups(const OpRoutes& routes, const std::vector<ClosedFormEnd>& ends,
                             std::size_t links) {
  std::vector<std::size_t> parent(links * 2);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  auto root = [&](std::size_t d) {
    while (parent[d] != d) d = parent[d] = parent[parent[d]];
    return d;
  };
  auto direction = [](const topo::Hop& hop) {
    return static_cast<std::size_t>(hop.link) * 2 + (hop.forward ? 1 : 0);
  };
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> first_direction(ends.size(), kNone);
  for (std::size_t j = 0; j < ends.size(); ++j) {
    for (const topo::Leg& leg : routes[ends[j].op]->legs) {
      for (const topo::Hop& hop : leg.hops) {
        const std::size_t d = root(direction(hop));
        if (first_direction[j] == kNone) {
          first_direction[j] = d;
        } else if (d != root(first_direction[j])) {
          parent[d] = root(first_direction[j]);
        }
      }
    }
  }
  // Dense group numbers; a transfer that crosses no link is a group of its own.
  std::vector<std::size_t> group_of_root(parent.size(), kNone), group(ends.size());
  std::size_t groups = 0;
  for (std::size_t j = 0; j < ends.size(); ++j) {
    if (first_direction[j] == kNone) {
      group[j] = groups++;
      continue;
    }
    std::size_t& g = group_of_root[root(first_direction[j])];
    if (g == kNone) g = groups++;
    group[j] = g;
  }
  SharingGroups out;
  out.begins.assign(groups + 1, 0);
  for (std::size_t g : group) ++out.begins[g + 1];
  std::partial_sum(out.begins.begin(), out.begins.end(), out.begins.begin());
  out.transfers.resize(ends.size());
  std::vector<std::size_t> next(out.begins.begin(), out.begins.end() - 1);
  for (std::size_t j = 0; j < ends.size(); ++j) out.transfers[next[group[j]]++] = j;
  return out;
}

// `group` flow by flow in closed time steps (fluid_depth.hpp).
double fluid_end_s(const coll::Schedule& schedule, const OpRoutes& routes,
                   const std::vector<ClosedFormEnd>& ends, const TransferGroup& group,
                   const topo::Topology& topology) {
  std::vector<DepthTransfer> fluid;
  fluid.reserve(group.size());
  for (std::size_t j : group) {
    fluid.push_back({.route = routes[ends[j].op],
                     .bytes = schedule.ops[ends[j].op].bytes,
                     .tail_s = ends[j].tail_s});
  }
  return fluid_depth_seconds(fluid, topology);
}

// When the depth's last transfer ends: by the closed form where it is exact, for the whole depth
// or for each group of transfers that share links, else flow by flow in closed time steps.
double depth_end_s(const coll::Schedule& schedule, const OpRoutes& routes,
                   const std::vector<ClosedFormEnd>& ends, const topo::Topology& topology) {
  std::vector<std::size_t> all(ends.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  if (ends_together(schedule, routes, ends, all)) return ends[latest_of(ends, all)].end_s;
  const SharingGroups groups = sharing_groups(routes, ends, topology.links().size());
  double end_s = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const TransferGroup group = groups[g];
    end_s = std::max(end_s, ends_together(schedule, routes, ends, group)
                                ? ends[latest_of(ends, group)].end_s
                                : fluid_end_s(schedule, routes, ends, group, topology));
  }
  return end_s;
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
  std::vector<ClosedFormEnd> ends;
  for (std::size_t k = 0; k < depths.size(); ++k) {
    for (std::size_t i : transfers[k]) {
      const topo::Route& r = *routes[i];
      for (std::size_t leg = 0; leg < r.legs.size(); ++leg) {
        for (const topo::Hop& hop : r.legs[leg].hops) ++loads.at(leg, hop);
      }
    }
    ends.clear();
    for (std::size_t i : transfers[k]) {
      const coll::Op& op = schedule.ops[i];
      const topo::Route& r = *routes[i];
      ClosedFormEnd end{.op = i};
      double route_latency_s = 0;
      for (std::size_t leg = 0; leg < r.legs.size(); ++leg) {
        double share = std::numeric_limits<double>::infinity();
        for (const topo::Hop& hop : r.legs[leg].hops) {
          const double hop_share =
              links[static_cast<std::size_t>(hop.link)].effective_bandwidth().value /
              loads.at(leg, hop);
          if (hop_share < share) {
            share = hop_share;
            if (leg == 0) end.narrowest = hop;
          }
        }
        const double latency_s = r.legs[leg].latency(topology).value;
        if (leg == 0) {
          end.start_s = latency_s;
          end.share = share;
        }
        route_latency_s += latency_s;
        end.end_s += latency_s + op.bytes / share;
      }
      if (op.pipeline < 0) {
        end.tail_s = (op.latency_steps - 1) * route_latency_s;
      } else {
        end.tail_s = std::max(0.0, op.latency_steps * pipeline_excess_s.at(op.pipeline) -
                                       route_latency_s);
      }
      end.end_s += end.tail_s;
      ends.push_back(end);
    }
    if (!ends.empty()) {
      depths[k].transfer_s =
          std::max(depths[k].transfer_s, depth_end_s(schedule, routes, ends, topology));
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
