#include "sim/engine/fluid_depth.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <tuple>
#include <unordered_map>

namespace gpuscale::sim {
namespace {

// SimGrid 3.32's defaults (src/simgrid/sg_config.cpp): events less than precision/timing apart
// happen together, and a link whose capacity left falls under precision/work-amount is spent.
constexpr double kTimingPrecision_s = 1e-9;
constexpr double kWorkPrecision = 1e-5;

// The depth's legs, flat: each leg's latency and the link directions it crosses, numbered from 0
// in the order met (a group crosses a few thousand of a cluster's hundreds of thousands), with
// each one's capacity.
class DepthLegs {
 public:
  DepthLegs(const std::vector<DepthTransfer>& transfers, const topo::Topology& topology) {
    std::unordered_map<std::size_t, std::size_t> number;  // link_direction -> its number here
    for (const DepthTransfer& t : transfers) {
      first_leg_.push_back(latency_s_.size());
      for (const topo::Leg& leg : t.route->legs) {
        latency_s_.push_back(leg.latency(topology).value);
        directions_begin_.push_back(directions_.size());
        for (const topo::Hop& hop : leg.hops) {
          const auto [it, fresh] = number.try_emplace(link_direction(hop), capacity_.size());
          if (fresh) {
            capacity_.push_back(
                topology.links()[static_cast<std::size_t>(hop.link)].effective_bandwidth().value);
          }
          directions_.push_back(it->second);
        }
      }
    }
    first_leg_.push_back(latency_s_.size());
    directions_begin_.push_back(directions_.size());
  }
  const std::vector<double>& capacities() const { return capacity_; }  // per direction number
  std::size_t first(std::size_t transfer) const { return first_leg_[transfer]; }
  std::size_t end(std::size_t transfer) const { return first_leg_[transfer + 1]; }
  double latency_s(std::size_t leg) const { return latency_s_[leg]; }
  const std::size_t* directions_begin(std::size_t leg) const {
    return directions_.data() + directions_begin_[leg];
  }
  const std::size_t* directions_end(std::size_t leg) const {
    return directions_.data() + directions_begin_[leg + 1];
  }

 private:
  std::vector<std::size_t> first_leg_;  // per transfer, and one past the last
  std::vector<double> latency_s_;
  std::vector<std::size_t> directions_begin_;  // per leg, and one past the last
  std::vector<std::size_t> directions_;  // numbers
  std::vector<double> capacity_;         // bytes/s, per direction number
};

// A leg moving its bytes.
struct Flight {
  std::size_t transfer = 0;
  std::size_t leg = 0;
  double remaining = 0;  // bytes
  double rate = 0;       // bytes/s
  double increment = 0;  // the solver's last round's growth of the rate
  bool settled = false;
};

// Rates as SimGrid 3.32's fair-bottleneck solver gives them (src/kernel/lmm/fair_bottleneck.cpp,
// FairBottleneck::do_solve): in rounds, every unsettled flight grows by the smallest, over its
// link directions, of the direction's capacity left split among its unsettled flights; then each
// direction spends what all its flights grew by (a settled flight's last growth included, as
// there), and a spent direction settles its flights.
class FairBottleneckRates {
 public:
  explicit FairBottleneckRates(std::vector<double> capacity)
      : capacity_(std::move(capacity)),
        left_(capacity_.size(), 0),
        share_(capacity_.size(), 0),
        member_count_(capacity_.size(), 0),
        members_begin_(capacity_.size(), 0) {}

  void solve(std::vector<Flight>& flights, const DepthLegs& legs) {
    index_members(flights, legs);
    std::vector<std::size_t> unsettled;
    for (std::size_t f = 0; f < flights.size(); ++f) {
      Flight& flight = flights[f];
      flight.increment = 0;
      // A leg that crosses no link (a GPU to itself) is not held back by any.
      flight.settled = legs.directions_begin(flight.leg) == legs.directions_end(flight.leg);
      flight.rate = flight.settled ? std::numeric_limits<double>::infinity() : 0;
      if (!flight.settled) unsettled.push_back(f);
    }
    std::vector<std::size_t> open = touched_;
    for (std::size_t d : open) left_[d] = capacity_[d];
    while (!unsettled.empty()) {
      std::erase_if(open, [&](std::size_t d) {
        int count = 0;
        for (std::size_t m = members_begin_[d]; m < members_begin_[d] + member_count_[d]; ++m)
          count += flights[members_[m]].settled ? 0 : 1;
        if (count == 0) return true;
        share_[d] = left_[d] / count;
        return false;
      });
      for (std::size_t f : unsettled) {
        Flight& flight = flights[f];
        double growth = std::numeric_limits<double>::max();
        for (auto d = legs.directions_begin(flight.leg); d != legs.directions_end(flight.leg); ++d)
          growth = std::min(growth, share_[*d]);
        flight.increment = growth;
        flight.rate += growth;
      }
      std::erase_if(open, [&](std::size_t d) {
        for (std::size_t m = members_begin_[d]; m < members_begin_[d] + member_count_[d]; ++m) {
          left_[d] -= flights[members_[m]].increment;
          if (left_[d] < kWorkPrecision) left_[d] = 0;
        }
        if (left_[d] > 0) return false;
        for (std::size_t m = members_begin_[d]; m < members_begin_[d] + member_count_[d]; ++m)
          flights[members_[m]].settled = true;
        return true;
      });
      std::erase_if(unsettled, [&](std::size_t f) { return flights[f].settled; });
    }
  }

 private:
  // members_ lists each touched direction's flights, from members_begin_.
  void index_members(const std::vector<Flight>& flights, const DepthLegs& legs) {
    for (std::size_t d : touched_) member_count_[d] = 0;
    touched_.clear();
    std::size_t elements = 0;
    for (const Flight& flight : flights) {
      for (auto d = legs.directions_begin(flight.leg); d != legs.directions_end(flight.leg); ++d) {
        if (member_count_[*d]++ == 0) touched_.push_back(*d);
        ++elements;
      }
    }
    std::size_t begin = 0;
    for (std::size_t d : touched_) {
      members_begin_[d] = begin;
      begin += static_cast<std::size_t>(member_count_[d]);
      member_count_[d] = 0;
    }
    members_.resize(elements);
    for (std::size_t f = 0; f < flights.size(); ++f) {
      const std::size_t leg = flights[f].leg;
      for (auto d = legs.directions_begin(leg); d != legs.directions_end(leg); ++d)
        members_[members_begin_[*d] + static_cast<std::size_t>(member_count_[*d]++)] = f;
    }
  }

  std::vector<double> capacity_, left_, share_;  // per link direction
  std::vector<int> member_count_;
  std::vector<std::size_t> members_begin_, members_, touched_;
};

}  // namespace

std::size_t link_direction(const topo::Hop& hop) {
  return static_cast<std::size_t>(hop.link) * 2 + (hop.forward ? 1 : 0);
}

double fluid_depth_seconds(const std::vector<DepthTransfer>& transfers,
                           const topo::Topology& topology) {
  const DepthLegs legs(transfers, topology);
  FairBottleneckRates rates(legs.capacities());
  // Legs waiting out their latency, soonest first: (when their bytes start, transfer, leg).
  using Start = std::tuple<double, std::size_t, std::size_t>;
  std::priority_queue<Start, std::vector<Start>, std::greater<>> starts;
  double last_end_s = 0;
  for (std::size_t t = 0; t < transfers.size(); ++t) {
    if (legs.first(t) == legs.end(t)) {
      last_end_s = std::max(last_end_s, transfers[t].tail_s);
    } else {
      starts.emplace(legs.latency_s(legs.first(t)), t, legs.first(t));
    }
  }
  std::vector<Flight> flights;
  double now = 0;
  while (!starts.empty() || !flights.empty()) {
    double step = starts.empty() ? std::numeric_limits<double>::infinity()
                                 : std::max(0.0, std::get<0>(starts.top()) - now);
    for (const Flight& f : flights) step = std::min(step, f.remaining / f.rate);
    now += step;
    // Flights ending within SimGrid's timing precision end now; their next legs wait out their
    // latency.
    std::erase_if(flights, [&](Flight& f) {
      f.remaining = std::isinf(f.rate) ? 0 : f.remaining - f.rate * step;
      if (f.remaining > f.rate * kTimingPrecision_s) return false;
      if (f.leg + 1 < legs.end(f.transfer)) {
        starts.emplace(now + legs.latency_s(f.leg + 1), f.transfer, f.leg + 1);
      } else {
        last_end_s = std::max(last_end_s, now + transfers[f.transfer].tail_s);
      }
      return true;
    });
    while (!starts.empty() && std::get<0>(starts.top()) - now < kTimingPrecision_s) {
      const auto [at, t, leg] = starts.top();
      starts.pop();
      flights.push_back({.transfer = t, .leg = leg, .remaining = transfers[t].bytes});
    }
    rates.solve(flights, legs);
  }
  return last_end_s;
}

}  // namespace gpuscale::sim
