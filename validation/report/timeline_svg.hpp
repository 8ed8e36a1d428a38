// A simulated run's timeline (sim/replay/timeline.hpp) as an SVG Gantt chart, for pictures in
// the docs (`gpuscale run --timeline`): what each GPU and link did when, e.g. one late rank
// holding up an allreduce. Perfetto (--trace) is the tool to explore a run; this is the picture.
//
// One panel per timeline (a configuration), stacked, each with its title, a row per track in the
// order its first event appears (as chrome_trace_json orders them; a track with nothing in the
// window keeps its empty row), the track's name at the left, and its own time axis in
// milliseconds. Events are rectangles coloured by category, with one legend of the categories
// present above the panels. Events of a track that overlap (flows sharing a link) are drawn over
// each other in the one row.
//
// The size stays bounded by the chart's pixels, not the run's events: in a row, consecutive
// events (by start) of one category less than half a pixel apart are merged into one rectangle,
// and only a rectangle that stands for a single event carries a tooltip (its name and duration).
// An event shorter than a pixel is drawn a pixel wide. Numbers have fixed decimals: the same
// timelines give the same bytes.
#pragma once

#include <string>
#include <vector>

#include "sim/replay/timeline.hpp"

namespace gpuscale::report {

// The stretch of simulated time drawn, in seconds. Events outside it are left out, events that
// cross its ends are cut there. A window whose `to_s` is not after `from_s` (the default) means
// the whole run: each panel from 0 to its last event's end.
struct TimeWindow {
  double from_s = 0;
  double to_s = 0;

  bool whole_run() const { return to_s <= from_s; }
};

// The chart's layout, in pixels: the canvas's width and where the time axis runs (track names
// sit left of it).
constexpr double kTimelineWidth = 1100;
constexpr double kTimelinePlotLeft = 190, kTimelinePlotRight = 1080;

std::string timeline_svg(const std::vector<sim::Timeline>& timelines, const TimeWindow& window);

}  // namespace gpuscale::report
