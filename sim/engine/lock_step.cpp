#include "sim/engine/lock_step.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
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

constexpr std::size_t kNoDirection = std::numeric_limits<std::size_t>::max();

// A transfer of a depth as the closed form sees it.
struct ClosedFormEnd {
  std::size_t op = 0;
  bool one_leg = true;
  double start_s = 0;                          // its first leg's latency
  std::size_t first_direction = kNoDirection;  // the first link direction it crosses
  std::size_t narrowest = kNoDirection;        // its first leg's most loaded link direction
  double share = 0;                            // its share of that direction
  double tail_s = 0;                           // the latency steps after its last leg
  double end_s = 0;
};

// The link directions one depth's transfers cross: what the transfers through each have in
// common, and which directions the transfers join into groups (a disjoint-set forest): max-min
// sharing settles each group's rates apart from the others'.
class DepthDirections {
 public:
  explicit DepthDirections(std::size_t links)
      : through_(links * 2), parent_(links * 2), group_(links * 2) {
    std::iota(parent_.begin(), parent_.end(), std::uint32_t{0});
  }

  void add(const ClosedFormEnd& end, const topo::Route& route, double bytes) {
    std::size_t first = kNoDirection;
    for (const topo::Leg& leg : route.legs) {
      for (const topo::Hop& hop : leg.hops) {
        const std::size_t d = link_direction(hop);
        touch(d);
        if (first == kNoDirection) {
          first = root(d);
        } else if (const std::size_t r = root(d); r != first) {
          parent_[r] = static_cast<std::uint32_t>(first);
        }
        if (!end.one_leg) continue;
        Through& t = through_[d];
        t.first_start_s = std::min(t.first_start_s, end.start_s);
        t.last_start_s = std::max(t.last_start_s, end.start_s);
        t.least_bytes = std::min(t.least_bytes, bytes);
        t.most_bytes = std::max(t.most_bytes, bytes);
        t.least_share = std::min(t.least_share, end.share);
      }
    }
  }

  // Whether the closed form ends the group of `latest`, the latest of its one-leg transfers, when
  // SimGrid would: every transfer through its narrowest link direction starts with it, carries
  // its bytes and has no narrower share elsewhere. Each of them then gets at least that share
  // (max-min sharing never gives a flow less than its narrowest share) and together no more than
  // the link, so exactly that, from their common start to their common end; every other
  // transfer ends by its own closed form, no later.
  bool closed_form_exact(const ClosedFormEnd& latest, double bytes) const {
    if (latest.narrowest == kNoDirection) return true;  // alone: it crosses no link
    const Through& t = through_[latest.narrowest];
    return t.least_bytes == bytes && t.most_bytes == bytes && t.least_share >= latest.share &&
           latest.start_s - t.first_start_s <= kSameStart_s &&
           t.last_start_s - latest.start_s <= kSameStart_s;
  }

  // The group of a transfer: a number below links * 2, or kNoDirection for a transfer that
  // crosses no link, a group of its own.
  std::size_t group_of(const ClosedFormEnd& end) {
    return end.first_direction == kNoDirection ? kNoDirection : root(end.first_direction);
  }

  // Per group, scratch for the depth's evaluation (reset by clear()).
  struct Group {
    std::size_t latest = kNoDirection;  // index of its latest transfer
    bool one_leg_each = true;
    bool stepped = false;  // run in closed time steps
    std::vector<DepthTransfer> transfers;
  };
  Group& group(std::size_t g) { return group_[g]; }
  const std::vector<std::size_t>& touched() const { return touched_; }

  void clear() {
    for (std::size_t d : touched_) {
      through_[d] = Through{};
      parent_[d] = static_cast<std::uint32_t>(d);
      group_[d] = Group{};
    }
    touched_.clear();
  }

 private:
  struct Through {
    double first_start_s = std::numeric_limits<double>::infinity();
    double last_start_s = -std::numeric_limits<double>::infinity();
    double least_bytes = std::numeric_limits<double>::infinity();
    double most_bytes = -std::numeric_limits<double>::infinity();
    double least_share = std::numeric_limits<double>::infinity();
    bool touched = false;
  };

  void touch(std::size_t d) {
    if (through_[d].touched) return;
    through_[d].touched = true;
    touched_.push_back(d);
  }
  std::size_t root(std::size_t d) {
    while (parent_[d] != d) d = parent_[d] = parent_[parent_[d]];
    return d;
  }

  std::vector<Through> through_;
  std::vector<std::uint32_t> parent_;  // the forest of groups; small, as every transfer asks it
  std::vector<Group> group_;
  std::vector<std::size_t> touched_;
};

// DepthDirections::closed_form_exact for the whole depth, from the transfers themselves: one
// pass, where the common case (every flow of a ring starting together) needs no more.
bool closed_form_exact(const coll::Schedule& schedule, const OpRoutes& routes,
                       const std::vector<ClosedFormEnd>& ends, const ClosedFormEnd& latest) {
  const double bytes = schedule.ops[latest.op].bytes;
  return std::all_of(ends.begin(), ends.end(), [&](const ClosedFormEnd& other) {
    if (!other.one_leg) return false;
    const auto& hops = routes[other.op]->legs.front().hops;
    const bool through = std::any_of(hops.begin(), hops.end(), [&](const topo::Hop& hop) {
      return link_direction(hop) == latest.narrowest;
    });
    return !through || (schedule.ops[other.op].bytes == bytes && other.share >= latest.share &&
                        std::abs(other.start_s - latest.start_s) <= kSameStart_s);
  });
}

// When the depth's last transfer ends: by the closed form where it is exact, for the whole
// depth or for each group of transfers that share links, else in closed time steps
// (fluid_depth.hpp).
double depth_end_s(const coll::Schedule& schedule, const OpRoutes& routes,
                   const std::vector<ClosedFormEnd>& ends,
                   std::optional<DepthDirections>& scratch, const topo::Topology& topology) {
  const auto by_end = [](const ClosedFormEnd& a, const ClosedFormEnd& b) {
    return a.end_s < b.end_s;
  };
  const ClosedFormEnd& latest = *std::max_element(ends.begin(), ends.end(), by_end);
  if (closed_form_exact(schedule, routes, ends, latest)) return latest.end_s;
  // Sized by the machine's links, so made only for a schedule that needs it.
  if (!scratch) scratch.emplace(topology.links().size());
  DepthDirections& directions = *scratch;
  directions.clear();
  for (const ClosedFormEnd& end : ends)
    directions.add(end, *routes[end.op], schedule.ops[end.op].bytes);
  double end_s = 0;
  std::vector<std::size_t> group_of(ends.size());
  for (std::size_t j = 0; j < ends.size(); ++j) {
    group_of[j] = directions.group_of(ends[j]);
    if (group_of[j] == kNoDirection) {
      end_s = std::max(end_s, ends[j].end_s);
      continue;
    }
    DepthDirections::Group& g = directions.group(group_of[j]);
    if (g.latest == kNoDirection || ends[g.latest].end_s < ends[j].end_s) g.latest = j;
    g.one_leg_each = g.one_leg_each && ends[j].one_leg;
  }
  for (std::size_t d : directions.touched()) {
    DepthDirections::Group& g = directions.group(d);
    if (g.latest == kNoDirection) continue;  // not a group's root
    const ClosedFormEnd& group_latest = ends[g.latest];
    g.stepped = !g.one_leg_each || !directions.closed_form_exact(
                                       group_latest, schedule.ops[group_latest.op].bytes);
    if (!g.stepped) end_s = std::max(end_s, group_latest.end_s);
  }
  for (std::size_t j = 0; j < ends.size(); ++j) {
    if (group_of[j] == kNoDirection) continue;
    DepthDirections::Group& g = directions.group(group_of[j]);
    if (g.stepped) {
      g.transfers.push_back({.route = routes[ends[j].op],
                             .bytes = schedule.ops[ends[j].op].bytes,
                             .tail_s = ends[j].tail_s});
    }
  }
  for (std::size_t d : directions.touched()) {
    const DepthDirections::Group& g = directions.group(d);
    if (g.stepped) end_s = std::max(end_s, fluid_depth_seconds(g.transfers, topology));
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
  std::optional<DepthDirections> directions;
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
            if (leg == 0) end.narrowest = link_direction(hop);
          }
          if (end.first_direction == kNoDirection) end.first_direction = link_direction(hop);
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
      end.one_leg = r.legs.size() == 1;
      ends.push_back(end);
    }
    if (!ends.empty()) {
      depths[k].transfer_s = std::max(depths[k].transfer_s,
                                      depth_end_s(schedule, routes, ends, directions, topology));
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
