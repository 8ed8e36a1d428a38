// A simulated run's timeline and its Chrome / Perfetto trace file (the JSON "trace event
// format": open it in ui.perfetto.dev or chrome://tracing).
//
// One process per timeline (a configuration of an experiment), one thread per track: each GPU's
// kernels and copies, each link direction's transfers (replay_timeline.hpp). Events overlap on a
// track when kernels share a GPU or flows share a link; the trace format wants a thread's events
// nested, so a track is split into as many lanes ("nvlink gpu0>gpu1 #2") as it has events in
// flight at once.
#pragma once

#include <string>
#include <vector>

namespace gpuscale::sim {

struct TimelineEvent {
  std::string track;     // "gpu0 kernels", "gpu0 copies", "nvlink gpu0>gpu1"
  std::string name;      // "fwd conv1", "p2p 281.1 MB gpu0>gpu5 leg 2/2"
  std::string category;  // the trace's `cat`: "forward", "backward", "update", "copy", "link", ...
  double start_s = 0;
  double end_s = 0;
  // The trace's `args`, each where it applies: the layer (or parameter tensor), the convolution
  // or collective algorithm, the bytes moved.
  std::string layer;
  std::string algorithm;
  double bytes = 0;
};

struct Timeline {
  std::string title;  // "resnet-50 nccl 8 GPUs batch 32"
  std::vector<TimelineEvent> events;
};

// One track of a timeline: its name and its events, in the timeline's order.
struct Track {
  std::string name;
  std::vector<const TimelineEvent*> events;
};

// The timeline's tracks in the order their first events appear in `events` (the order the trace
// and the SVG picture, report/timeline_svg.hpp, show them in).
std::vector<Track> tracks_of(const Timeline& timeline);

// The trace file's text. Tracks keep the order of their first event's appearance in `events`.
// Timeline i is process i + 1 (some viewers drop pid 0); every event has a category.
std::string chrome_trace_json(const std::vector<Timeline>& timelines);

}  // namespace gpuscale::sim
