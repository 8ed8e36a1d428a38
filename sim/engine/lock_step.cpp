#include "sim/engine/lock_step.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <utility>

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

// Each transfer's route latency, its legs' summed in order (0 for the other ops).
std::vector<double> route_latencies(const coll::Schedule& schedule, const topo::Topology& topology,
                                    const OpRoutes& routes) {
  std::vector<double> latency_s(schedule.ops.size(), 0.0);
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    if (routes[i] == nullptr) continue;
    for (const topo::Leg& leg : routes[i]->legs) latency_s[i] += leg.latency(topology).value;
  }
  return latency_s;
}

// Per pipeline, the excess of its flows' mean route latency over what its schedule paid per step.
std::map<int, double> excess_latencies(const coll::Schedule& schedule,
                                       const std::vector<double>& route_latency_s) {
  std::map<int, std::pair<double, int>> sums;  // pipeline -> (route latencies, flows)
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const coll::Op& op = schedule.ops[i];
    if (op.kind != coll::Op::Kind::Transfer || op.pipeline < 0) continue;
    auto& [latency_s, flows] = sums[op.pipeline];
    latency_s += route_latency_s[i];
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
  // The link directions it crosses, in a depth's `crossed` list: [first, first_leg_end) on its
  // first leg, then those of its other legs up to `crossed_end`.
  std::size_t first = 0, first_leg_end = 0, crossed_end = 0;
  std::size_t narrowest = kNoDirection;        // its first leg's most loaded link direction
  double share = 0;                            // its share of that direction
  // Its legs' latencies and shares, in LockStepShape's `legs`: [legs_first, legs_end).
  std::size_t legs_first = 0, legs_end = 0;
};

// When each transfer of a depth ends, and the latency steps it waits after its last leg: what a
// schedule's bytes and steps add to its shape's ClosedFormEnds, in the same order.
struct DepthTimes {
  std::vector<double> end_s, tail_s;
};

// A leg of a transfer as its depth shares it: its latency, and its share of its narrowest link.
struct LegCost {
  double latency_s = 0;
  double share = 0;
};

// What the transfers through one link direction have in common, as far as the closed form's
// exactness there needs it.
struct Through {
  double first_start_s = std::numeric_limits<double>::infinity();
  double last_start_s = -std::numeric_limits<double>::infinity();
  double least_bytes = std::numeric_limits<double>::infinity();
  double most_bytes = -std::numeric_limits<double>::infinity();
  double least_share = std::numeric_limits<double>::infinity();

  void add(const ClosedFormEnd& end, double bytes) {
    first_start_s = std::min(first_start_s, end.start_s);
    last_start_s = std::max(last_start_s, end.start_s);
    least_bytes = std::min(least_bytes, bytes);
    most_bytes = std::max(most_bytes, bytes);
    least_share = std::min(least_share, end.share);
  }

  // Whether the closed form ends `latest`, whose narrowest link direction this is, the latest of
  // one-leg transfers, when SimGrid would: every transfer through it starts with `latest`,
  // carries its bytes and has no narrower share elsewhere. Each of them then gets at least that
  // share (max-min sharing never gives a flow less than its narrowest share) and together no
  // more than the link, so exactly that, from their common start to their common end; every
  // other transfer ends by its own closed form, no later.
  bool closed_form_exact(const ClosedFormEnd& latest, double bytes) const {
    return least_bytes == bytes && most_bytes == bytes && least_share >= latest.share &&
           latest.start_s - first_start_s <= kSameStart_s &&
           last_start_s - latest.start_s <= kSameStart_s;
  }
};

// The groups of one depth's transfers that share link directions, directly or through others
// (a disjoint-set forest over the directions): max-min sharing settles each group's rates apart
// from the others'.
class SharingGroups {
 public:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  explicit SharingGroups(std::size_t links)
      : parent_(links * 2), number_(links * 2, kNone) {
    std::iota(parent_.begin(), parent_.end(), std::uint32_t{0});
  }

  void join(const ClosedFormEnd& end, const std::vector<std::uint32_t>& crossed) {
    if (end.first == end.crossed_end) return;
    const std::uint32_t first = root(crossed[end.first]);
    for (std::size_t c = end.first + 1; c < end.crossed_end; ++c) {
      if (const std::uint32_t r = root(crossed[c]); r != first) {
        parent_[r] = first;
        changed_.push_back(r);
      }
    }
  }

  // The group of a transfer, numbered from 0 in the order asked; kNone for a transfer that
  // crosses no link, a group of its own.
  std::uint32_t group_of(const ClosedFormEnd& end, const std::vector<std::uint32_t>& crossed) {
    if (end.first == end.crossed_end) return kNone;
    const std::uint32_t r = root(crossed[end.first]);
    if (number_[r] == kNone) {
      number_[r] = groups_++;
      changed_.push_back(r);
    }
    return number_[r];
  }
  std::uint32_t count() const { return groups_; }

  void clear() {
    for (std::uint32_t d : changed_) {
      parent_[d] = d;
      number_[d] = kNone;
    }
    changed_.clear();
    groups_ = 0;
  }

 private:
  std::uint32_t root(std::uint32_t d) {
    while (parent_[d] != d) d = parent_[d] = parent_[parent_[d]];
    return d;
  }

  std::vector<std::uint32_t> parent_;
  std::vector<std::uint32_t> number_;   // per root, its group's number
  std::vector<std::uint32_t> changed_;  // the directions to reset
  std::uint32_t groups_ = 0;
};

// Through::closed_form_exact for the whole depth, from the transfers themselves: one pass,
// where the common case (every flow of a ring starting together) needs no more.
bool closed_form_exact(const coll::Schedule& schedule, const std::vector<ClosedFormEnd>& ends,
                       const std::vector<std::uint32_t>& crossed, const ClosedFormEnd& latest) {
  if (latest.narrowest == kNoDirection) return true;  // it crosses no link
  Through through;
  for (const ClosedFormEnd& other : ends) {
    if (!other.one_leg) return false;
    const auto begin = crossed.begin() + static_cast<std::ptrdiff_t>(other.first);
    const auto end = crossed.begin() + static_cast<std::ptrdiff_t>(other.first_leg_end);
    if (std::find(begin, end, latest.narrowest) != end)
      through.add(other, schedule.ops[other.op].bytes);
  }
  return through.closed_form_exact(latest, schedule.ops[latest.op].bytes);
}

// What of one depth's sharing groups depends only on its shape: each transfer's group, each
// group's transfers, and each stepped group's twin, the first group stepped before it whose
// transfers, taken in order, cross as many legs of the same latencies over links of the same
// capacities, met in the same order. Closed time steps (fluid_depth.hpp) see no more of a group
// than that, so a group whose transfers carry its twin's bytes and steps ends when its twin
// does: a tree over 16,384 GPUs of a SuperPOD has one such depth, of 8 groups of 8,188
// transfers, one per rail, alike.
class DepthGroups {
 public:
  // Of the depth's `ends`, with the shape's `crossed`, `legs` and `routes`, which must outlive it.
  DepthGroups(const std::vector<ClosedFormEnd>& ends, const std::vector<std::uint32_t>& crossed,
              const std::vector<LegCost>& legs, const OpRoutes& routes,
              const topo::Topology& topology, SharingGroups& sharing)
      : ends_(ends), crossed_(crossed), legs_(legs), routes_(routes), topology_(topology) {
    sharing.clear();
    for (const ClosedFormEnd& end : ends) sharing.join(end, crossed);
    group_of_.resize(ends.size());
    for (std::size_t j = 0; j < ends.size(); ++j) group_of_[j] = sharing.group_of(ends[j], crossed);
    // The groups' transfers, group by group, in order.
    first_member_.assign(sharing.count() + 1, 0);
    for (std::uint32_t g : group_of_) {
      if (g != SharingGroups::kNone) ++first_member_[g + 1];
    }
    std::partial_sum(first_member_.begin(), first_member_.end(), first_member_.begin());
    members_.resize(first_member_.back());
    std::vector<std::uint32_t> next(first_member_.begin(), first_member_.end() - 1);
    one_leg_each_.assign(sharing.count(), true);
    for (std::size_t j = 0; j < ends.size(); ++j) {
      if (const std::uint32_t g = group_of_[j]; g != SharingGroups::kNone) {
        members_[next[g]++] = static_cast<std::uint32_t>(j);
        if (!ends[j].one_leg) one_leg_each_[g] = false;
      }
    }
    twin_.assign(sharing.count(), kUnknown);
  }

  std::uint32_t count() const { return static_cast<std::uint32_t>(one_leg_each_.size()); }
  std::uint32_t group_of(std::size_t transfer) const { return group_of_[transfer]; }
  std::span<const std::uint32_t> members(std::uint32_t group) const {
    return {members_.data() + first_member_[group], members_.data() + first_member_[group + 1]};
  }
  bool one_leg_each(std::uint32_t group) const { return one_leg_each_[group]; }

  // The twin of `group`, which is being stepped: itself where no group stepped before is alike.
  std::uint32_t twin(std::uint32_t group) const {
    if (twin_[group] != kUnknown) return twin_[group];
    std::vector<double> structure = structure_of(group);
    std::vector<std::uint32_t>& alike = stepped_by_hash_[hash_of(structure)];
    for (std::uint32_t other : alike) {
      if (structures_.at(other) == structure) return twin_[group] = other;
    }
    alike.push_back(group);
    structures_.emplace(group, std::move(structure));
    return twin_[group] = group;
  }

 private:
  static constexpr std::uint32_t kUnknown = std::numeric_limits<std::uint32_t>::max();

  // A group's transfers in order, each as its legs' latencies and the link directions each leg
  // crosses, numbered in the order met, with their capacities: what fluid_depth.cpp reads of them.
  std::vector<double> structure_of(std::uint32_t group) const {
    std::vector<double> structure;
    std::unordered_map<std::uint32_t, std::uint32_t> number;  // direction -> order met
    for (std::uint32_t j : members(group)) {
      const ClosedFormEnd& end = ends_[j];
      const topo::Route& route = *routes_[end.op];
      structure.push_back(static_cast<double>(route.legs.size()));
      std::size_t c = end.first;
      for (std::size_t leg = 0; leg < route.legs.size(); ++leg) {
        structure.push_back(legs_[end.legs_first + leg].latency_s);
        structure.push_back(static_cast<double>(route.legs[leg].hops.size()));
        for (const topo::Hop& hop : route.legs[leg].hops) {
          const auto [it, fresh] =
              number.try_emplace(crossed_[c++], static_cast<std::uint32_t>(number.size()));
          structure.push_back(it->second);
          structure.push_back(
              topology_.links()[static_cast<std::size_t>(hop.link)].effective_bandwidth().value);
        }
      }
    }
    return structure;
  }
  static std::uint64_t hash_of(const std::vector<double>& structure) {
    std::uint64_t h = 14695981039346656037ull;  // FNV-1a over the values' bits
    for (double v : structure) {
      h ^= std::bit_cast<std::uint64_t>(v);
      h *= 1099511628211ull;
    }
    return h;
  }

  const std::vector<ClosedFormEnd>& ends_;
  const std::vector<std::uint32_t>& crossed_;
  const std::vector<LegCost>& legs_;
  const OpRoutes& routes_;
  const topo::Topology& topology_;
  std::vector<std::uint32_t> group_of_;
  std::vector<std::uint32_t> first_member_, members_;  // group g's: [first_member_[g], [g + 1])
  std::vector<bool> one_leg_each_;
  // Filled as groups are stepped, schedule after schedule of the shape.
  mutable std::vector<std::uint32_t> twin_;
  mutable std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> stepped_by_hash_;
  mutable std::unordered_map<std::uint32_t, std::vector<double>> structures_;  // of each first
};

// When the depth's last transfer ends: by the closed form where it is exact, for the whole
// depth or for each group of transfers that share links, else in closed time steps
// (fluid_depth.hpp), once for a group and its twins where they carry the same bytes.
double depth_end_s(const coll::Schedule& schedule, const OpRoutes& routes,
                   const std::vector<ClosedFormEnd>& ends, const DepthTimes& times,
                   const std::vector<std::uint32_t>& crossed,
                   const std::function<const DepthGroups&()>& groups_of_depth,
                   const topo::Topology& topology) {
  const std::vector<double>& ends_s = times.end_s;
  const auto later = [&](std::size_t a, std::size_t b) { return ends_s[a] < ends_s[b]; };
  std::size_t latest = 0;
  for (std::size_t j = 1; j < ends.size(); ++j) latest = later(latest, j) ? j : latest;
  if (closed_form_exact(schedule, ends, crossed, ends[latest])) return ends_s[latest];

  const DepthGroups& groups = groups_of_depth();
  const auto bytes_of = [&](std::uint32_t j) { return schedule.ops[ends[j].op].bytes; };
  double end_s = 0;
  for (std::size_t j = 0; j < ends.size(); ++j) {
    if (groups.group_of(j) == SharingGroups::kNone) end_s = std::max(end_s, ends_s[j]);
  }
  // Per group, its end where closed time steps gave it (NaN: not stepped).
  std::vector<double> stepped_end_s(groups.count(), std::nan(""));
  for (std::uint32_t g = 0; g < groups.count(); ++g) {
    const std::span<const std::uint32_t> members = groups.members(g);
    std::uint32_t group_latest = members.front();
    for (std::uint32_t j : members) group_latest = later(group_latest, j) ? j : group_latest;
    const ClosedFormEnd& latest_end = ends[group_latest];
    if (groups.one_leg_each(g) && latest_end.narrowest != kNoDirection) {
      // What the transfers through its latest one's narrowest link direction share.
      Through through;
      for (std::uint32_t j : members) {
        const auto begin = crossed.begin() + static_cast<std::ptrdiff_t>(ends[j].first);
        const auto first_leg_end =
            crossed.begin() + static_cast<std::ptrdiff_t>(ends[j].first_leg_end);
        if (std::find(begin, first_leg_end, latest_end.narrowest) != first_leg_end)
          through.add(ends[j], bytes_of(j));
      }
      if (through.closed_form_exact(latest_end, bytes_of(group_latest))) {
        end_s = std::max(end_s, ends_s[group_latest]);
        continue;
      }
    }
    const std::uint32_t twin = groups.twin(g);
    if (twin != g && !std::isnan(stepped_end_s[twin])) {
      const std::span<const std::uint32_t> twins = groups.members(twin);
      bool alike = true;
      for (std::size_t m = 0; m < members.size() && alike; ++m) {
        alike = bytes_of(members[m]) == bytes_of(twins[m]) &&
                times.tail_s[members[m]] == times.tail_s[twins[m]];
      }
      if (alike) {
        stepped_end_s[g] = stepped_end_s[twin];
        end_s = std::max(end_s, stepped_end_s[g]);
        continue;
      }
    }
    std::vector<DepthTransfer> stepped;
    stepped.reserve(members.size());
    for (std::uint32_t j : members) {
      stepped.push_back(
          {.route = routes[ends[j].op], .bytes = bytes_of(j), .tail_s = times.tail_s[j]});
    }
    stepped_end_s[g] = fluid_depth_seconds(stepped, topology);
    end_s = std::max(end_s, stepped_end_s[g]);
  }
  return end_s;
}

// The depths of a schedule whose ops start when their own dependencies end
// (Schedule::ops_start_when_ready): each op ends its own time after its dependencies' latest end
// (a transfer's time from its depth's link loads, `transfer_s`; a delay's seconds; a reduction's
// none here, its GPU time being its depth's as for lock-step depths), and each depth takes what
// its latest op adds to the end of those before it.
void time_ops_apart(const coll::Schedule& schedule,
                    const std::vector<LockStepShape::Place>& places,
                    const std::vector<double>& transfer_s, std::vector<LockStepDepth>& depths) {
  std::vector<double> end_s(schedule.ops.size(), 0.0);
  std::vector<double> latest_end_s(depths.size(), 0.0);  // per depth
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const coll::Op& op = schedule.ops[i];
    double start_s = 0;
    for (int d : op.deps) start_s = std::max(start_s, end_s[static_cast<std::size_t>(d)]);
    end_s[i] = start_s + (op.kind == coll::Op::Kind::Delay ? op.seconds : transfer_s[i]);
    double& latest = latest_end_s[static_cast<std::size_t>(places[i].depth)];
    latest = std::max(latest, end_s[i]);
  }
  double before_s = 0;
  for (std::size_t k = 0; k < depths.size(); ++k) {
    const double through_s = std::max(before_s, latest_end_s[k]);
    depths[k].transfer_s = through_s - before_s;
    before_s = through_s;
  }
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
  return excess_latencies(schedule,
                          route_latencies(schedule, topology, op_routes(schedule, route)));
}

std::vector<LockStepShape::Place> LockStepShape::places_of(const coll::Schedule& schedule) {
  const std::vector<int> depth = op_depths(schedule);
  std::vector<Place> places(schedule.ops.size());
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const coll::Op& op = schedule.ops[i];
    places[i] = {op.kind, op.src, op.dst, op.pipeline, depth[i]};
  }
  return places;
}

std::uint64_t LockStepShape::hash_of(const std::vector<Place>& places) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a over each place's fields
  const auto add = [&h](std::int64_t v) {
    h ^= static_cast<std::uint64_t>(v);
    h *= 1099511628211ull;
  };
  for (const Place& p : places) {
    add(static_cast<std::int64_t>(p.kind));
    add(p.src);
    add(p.dst);
    add(p.pipeline);
    add(p.depth);
  }
  return h;
}

struct LockStepShape::Data {
  const topo::Topology* topology = nullptr;
  OpRoutes routes;
  std::vector<double> route_latency_s;           // per op (route_latencies)
  std::vector<std::vector<ClosedFormEnd>> ends;  // per depth, its transfers
  std::vector<LegCost> legs;                     // ClosedFormEnd::[legs_first, legs_end)
  std::vector<std::uint32_t> crossed;  // link directions, ClosedFormEnd::[first, crossed_end)
  // Per depth, its sharing groups, settled when a schedule of this shape first needs them (a
  // ring's depths never do), and their scratch, sized by the machine's links.
  mutable std::vector<std::unique_ptr<DepthGroups>> groups;
  mutable std::optional<SharingGroups> sharing;

  const DepthGroups& groups_of(std::size_t depth) const {
    if (!groups[depth]) {
      if (!sharing) sharing.emplace(topology->links().size());
      groups[depth] =
          std::make_unique<DepthGroups>(ends[depth], crossed, legs, routes, *topology, *sharing);
    }
    return *groups[depth];
  }
};

LockStepShape::LockStepShape(const coll::Schedule& schedule, const topo::Topology& topology,
                             OpRoutes routes)
    : places_(places_of(schedule)), data_(std::make_unique<Data>()) {
  Data& d = *data_;
  d.topology = &topology;
  d.routes = std::move(routes);
  d.route_latency_s.assign(places_.size(), 0.0);  // summed below, leg by leg as route_latencies
  int deepest = -1;
  for (const Place& p : places_) deepest = std::max(deepest, p.depth);
  std::vector<std::vector<std::size_t>> transfers(static_cast<std::size_t>(deepest + 1));
  for (std::size_t i = 0; i < places_.size(); ++i) {
    if (places_[i].kind == coll::Op::Kind::Transfer)
      transfers[static_cast<std::size_t>(places_[i].depth)].push_back(i);
  }
  d.ends.resize(transfers.size());
  d.groups.resize(transfers.size());
  const auto& links = topology.links();
  LinkLoads loads(links.size());
  for (std::size_t k = 0; k < transfers.size(); ++k) {
    for (std::size_t i : transfers[k]) {
      const topo::Route& r = *d.routes[i];
      for (std::size_t leg = 0; leg < r.legs.size(); ++leg) {
        for (const topo::Hop& hop : r.legs[leg].hops) ++loads.at(leg, hop);
      }
    }
    d.ends[k].reserve(transfers[k].size());
    for (std::size_t i : transfers[k]) {
      const topo::Route& r = *d.routes[i];
      ClosedFormEnd end{.op = i, .first = d.crossed.size(), .first_leg_end = d.crossed.size(),
                        .legs_first = d.legs.size()};
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
          d.crossed.push_back(static_cast<std::uint32_t>(link_direction(hop)));
        }
        const double latency_s = r.legs[leg].latency(topology).value;
        d.route_latency_s[i] += latency_s;
        if (leg == 0) {
          end.start_s = latency_s;
          end.share = share;
          end.first_leg_end = d.crossed.size();
        }
        d.legs.push_back({latency_s, share});
      }
      end.one_leg = r.legs.size() == 1;
      end.crossed_end = d.crossed.size();
      end.legs_end = d.legs.size();
      d.ends[k].push_back(end);
    }
    loads.clear();
  }
}

LockStepShape::~LockStepShape() = default;
LockStepShape::LockStepShape(LockStepShape&&) noexcept = default;

bool LockStepShape::fits(const std::vector<Place>& places) const { return places == places_; }

std::vector<LockStepDepth> LockStepShape::depths(const coll::Schedule& schedule) const {
  const Data& d = *data_;
  std::vector<LockStepDepth> depths(d.ends.size());
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const coll::Op& op = schedule.ops[i];
    LockStepDepth& depth = depths[static_cast<std::size_t>(places_[i].depth)];
    if (op.kind == coll::Op::Kind::Reduce)
      depth.reduce_bytes = std::max(depth.reduce_bytes, op.bytes);
    if (op.kind == coll::Op::Kind::Delay)
      depth.transfer_s = std::max(depth.transfer_s, op.seconds);
  }
  const std::map<int, double> pipeline_excess_s = excess_latencies(schedule, d.route_latency_s);
  DepthTimes times;
  std::vector<double> transfer_s;  // per op, where ops start when ready
  if (schedule.ops_start_when_ready) transfer_s.assign(schedule.ops.size(), 0.0);
  for (std::size_t k = 0; k < d.ends.size(); ++k) {
    const std::vector<ClosedFormEnd>& ends = d.ends[k];
    if (ends.empty()) continue;
    times.end_s.assign(ends.size(), 0.0);
    times.tail_s.resize(ends.size());
    for (std::size_t j = 0; j < ends.size(); ++j) {
      const ClosedFormEnd& end = ends[j];
      const coll::Op& op = schedule.ops[end.op];
      double& end_s = times.end_s[j];
      for (std::size_t leg = end.legs_first; leg < end.legs_end; ++leg)
        end_s += d.legs[leg].latency_s + op.bytes / d.legs[leg].share;
      const double route_latency_s = d.route_latency_s[end.op];
      double& tail_s = times.tail_s[j];
      if (op.pipeline < 0) {
        tail_s = (op.latency_steps - 1) * route_latency_s;
      } else {
        tail_s = std::max(0.0, op.latency_steps * pipeline_excess_s.at(op.pipeline) -
                                   route_latency_s);
      }
      end_s += tail_s;
    }
    if (schedule.ops_start_when_ready) {
      for (std::size_t j = 0; j < ends.size(); ++j) transfer_s[ends[j].op] = times.end_s[j];
      continue;
    }
    depths[k].transfer_s =
        std::max(depths[k].transfer_s,
                 depth_end_s(schedule, d.routes, ends, times, d.crossed,
                             [&d, k]() -> const DepthGroups& { return d.groups_of(k); },
                             *d.topology));
  }
  if (schedule.ops_start_when_ready) time_ops_apart(schedule, places_, transfer_s, depths);
  return depths;
}

void LockStepShape::add_link_bytes(const coll::Schedule& schedule,
                                   std::vector<double>& link_bytes) const {
  const Data& d = *data_;
  // In the order of the ops, then of each one's legs and hops: the sums are those a flow-by-flow
  // replay adds, to the last bit.
  std::vector<const ClosedFormEnd*> end_of(schedule.ops.size(), nullptr);
  for (const auto& depth : d.ends) {
    for (const ClosedFormEnd& end : depth) end_of[end.op] = &end;
  }
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    if (end_of[i] == nullptr) continue;
    for (std::size_t c = end_of[i]->first; c < end_of[i]->crossed_end; ++c)
      link_bytes[d.crossed[c]] += schedule.ops[i].bytes;
  }
}

std::vector<LockStepDepth> lock_step_depths(const coll::Schedule& schedule,
                                            const topo::Topology& topology,
                                            const OpRoutes& routes) {
  return LockStepShape(schedule, topology, routes).depths(schedule);
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
