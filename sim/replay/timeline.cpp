#include "sim/replay/timeline.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <numeric>

namespace gpuscale::sim {
namespace {

using nlohmann::ordered_json;

constexpr double kMicroseconds = 1e6;  // the format's time unit

// Lane of each event of one track: the first lane free when it starts (events by start time).
std::vector<int> assign_lanes(const std::vector<const TimelineEvent*>& events) {
  std::vector<size_t> order(events.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return events[a]->start_s < events[b]->start_s; });
  std::vector<int> lane(events.size());
  std::vector<double> lane_free_at;
  for (size_t i : order) {
    size_t l = 0;
    while (l < lane_free_at.size() && lane_free_at[l] > events[i]->start_s) ++l;
    if (l == lane_free_at.size()) lane_free_at.push_back(0);
    lane_free_at[l] = events[i]->end_s;
    lane[i] = static_cast<int>(l);
  }
  return lane;
}

}  // namespace

std::string chrome_trace_json(const std::vector<Timeline>& timelines) {
  ordered_json events = ordered_json::array();
  for (size_t pid = 0; pid < timelines.size(); ++pid) {
    const Timeline& timeline = timelines[pid];
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid},
                      {"args", {{"name", timeline.title}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid},
                      {"args", {{"sort_index", pid}}}});
    std::vector<std::string> tracks;
    std::map<std::string, std::vector<const TimelineEvent*>> by_track;
    for (const TimelineEvent& e : timeline.events) {
      auto& list = by_track[e.track];
      if (list.empty()) tracks.push_back(e.track);
      list.push_back(&e);
    }
    int tid = 0;
    for (const std::string& track : tracks) {
      const auto& list = by_track[track];
      const std::vector<int> lane = assign_lanes(list);
      const int lanes = *std::max_element(lane.begin(), lane.end()) + 1;
      for (int l = 0; l < lanes; ++l) {
        const std::string name = l == 0 ? track : track + " #" + std::to_string(l + 1);
        events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid + l},
                          {"args", {{"name", name}}}});
        events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid},
                          {"tid", tid + l}, {"args", {{"sort_index", tid + l}}}});
      }
      for (size_t i = 0; i < list.size(); ++i) {
        events.push_back({{"name", list[i]->name},
                          {"ph", "X"},
                          {"pid", pid},
                          {"tid", tid + lane[i]},
                          {"ts", list[i]->start_s * kMicroseconds},
                          {"dur", (list[i]->end_s - list[i]->start_s) * kMicroseconds}});
      }
      tid += lanes;
    }
  }
  return ordered_json{{"displayTimeUnit", "ms"}, {"traceEvents", events}}.dump() + "\n";
}

}  // namespace gpuscale::sim
