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

ordered_json args_of(const TimelineEvent& e) {
  ordered_json args = ordered_json::object();
  if (!e.layer.empty()) args["layer"] = e.layer;
  if (!e.algorithm.empty()) args["algorithm"] = e.algorithm;
  if (e.bytes > 0) args["bytes"] = e.bytes;
  return args;
}

// A metadata event (a process's or a thread's name or place), in Chrome's own category.
ordered_json metadata(const char* name, size_t pid, ordered_json args) {
  return {{"name", name}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", pid},
          {"args", std::move(args)}};
}

}  // namespace

std::vector<Track> tracks_of(const Timeline& timeline) {
  std::vector<Track> tracks;
  std::map<std::string, size_t> index;
  for (const TimelineEvent& e : timeline.events) {
    const auto [it, added] = index.try_emplace(e.track, tracks.size());
    if (added) tracks.push_back({e.track, {}});
    tracks[it->second].events.push_back(&e);
  }
  return tracks;
}

std::string chrome_trace_json(const std::vector<Timeline>& timelines) {
  ordered_json events = ordered_json::array();
  for (size_t t = 0; t < timelines.size(); ++t) {
    const Timeline& timeline = timelines[t];
    const size_t pid = t + 1;
    events.push_back(metadata("process_name", pid, {{"name", timeline.title}}));
    events.push_back(metadata("process_sort_index", pid, {{"sort_index", pid}}));
    int tid = 0;
    for (const auto& [track, list] : tracks_of(timeline)) {
      const std::vector<int> lane = assign_lanes(list);
      const int lanes = *std::max_element(lane.begin(), lane.end()) + 1;
      for (int l = 0; l < lanes; ++l) {
        const std::string name = l == 0 ? track : track + " #" + std::to_string(l + 1);
        ordered_json thread_name = metadata("thread_name", pid, {{"name", name}});
        thread_name["tid"] = tid + l;
        events.push_back(std::move(thread_name));
        ordered_json thread_index = metadata("thread_sort_index", pid, {{"sort_index", tid + l}});
        thread_index["tid"] = tid + l;
        events.push_back(std::move(thread_index));
      }
      for (size_t i = 0; i < list.size(); ++i) {
        events.push_back({{"name", list[i]->name},
                          {"cat", list[i]->category},
                          {"ph", "X"},
                          {"pid", pid},
                          {"tid", tid + lane[i]},
                          {"ts", list[i]->start_s * kMicroseconds},
                          {"dur", (list[i]->end_s - list[i]->start_s) * kMicroseconds},
                          {"args", args_of(*list[i])}});
      }
      tid += lanes;
    }
  }
  return ordered_json{{"displayTimeUnit", "ms"}, {"traceEvents", events}}.dump() + "\n";
}

}  // namespace gpuscale::sim
