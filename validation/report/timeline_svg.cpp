#include "validation/report/timeline_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <utility>

#include "validation/report/svg_chart.hpp"
#include "validation/report/svg_text.hpp"

namespace gpuscale::report {
namespace {

using sim::Timeline;
using sim::TimelineEvent;
using sim::Track;

// Vertical layout, in pixels.
constexpr double kRowHeight = 14, kBarHeight = 10;
constexpr double kPanelTitleHeight = 26, kAxisHeight = 36, kPanelGap = 10;
constexpr double kLegendTop = 8, kLegendRowHeight = 18;
constexpr double kTimelineMargin = 10;
constexpr double kTimelineLegendCharWidth = 6.5;  // rough, at the chart's 11 px font

constexpr double kMinBarWidth = 1;  // pixels: an event shorter than this would vanish
constexpr double kMergeGap = 0.5;   // pixels: closer than this, two bars read as one anyway

// The categories replay_timeline.cpp writes, in the legend's order (the GPUs' kernels, then the
// exchange), each with its colour; any other category is grey and comes after them.
struct CategoryColour {
  const char* category;
  const char* colour;
};
constexpr std::array<CategoryColour, 8> kCategoryColours = {{{"forward", "#1f77b4"},
                                                             {"backward", "#ff7f0e"},
                                                             {"update", "#2ca02c"},
                                                             {"reduction", "#d62728"},
                                                             {"copy", "#9467bd"},
                                                             {"input", "#e377c2"},
                                                             {"transfer", "#8c564b"},
                                                             {"link", "#17becf"}}};
constexpr const char* kOtherColour = "#7f7f7f";

// The category's place in kCategoryColours, or its size for another category.
size_t known_index(const std::string& category) {
  size_t i = 0;
  while (i < kCategoryColours.size() && category != kCategoryColours[i].category) ++i;
  return i;
}

const char* colour_of(const std::string& category) {
  const size_t i = known_index(category);
  return i < kCategoryColours.size() ? kCategoryColours[i].colour : kOtherColour;
}

// The categories that occur in any timeline, in the legend's order: the known ones as
// kCategoryColours lists them, then the others as they first appear.
std::vector<std::string> categories_present(const std::vector<Timeline>& timelines) {
  std::vector<std::string> present;
  std::set<std::string> seen;
  for (const Timeline& t : timelines) {
    for (const TimelineEvent& e : t.events) {
      if (seen.insert(e.category).second) present.push_back(e.category);
    }
  }
  std::stable_sort(present.begin(), present.end(), [](const auto& a, const auto& b) {
    return known_index(a) < known_index(b);
  });
  return present;
}

// A swatch and name per category, left to right, wrapping at the canvas's edge; the panels
// start at its bottom.
struct TimelineLegend {
  std::string svg;
  double bottom = 0;
};

TimelineLegend timeline_legend_of(const std::vector<std::string>& categories) {
  TimelineLegend legend;
  double x = kTimelineMargin, y = kLegendTop;
  for (const std::string& category : categories) {
    const double width =
        14 + 6 + kTimelineLegendCharWidth * static_cast<double>(category.size()) + 18;
    if (x > kTimelineMargin && x + width > kTimelineWidth - kTimelineMargin) {
      x = kTimelineMargin;
      y += kLegendRowHeight;
    }
    legend.svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        x, y + 2, colour_of(category), x + 20, y + 11, xml_escape(category));
    x += width;
  }
  legend.bottom = categories.empty() ? 0 : y + kLegendRowHeight;
  return legend;
}

// One panel's time axis: the window it draws, seconds to pixels.
struct TimeAxis {
  double from_s = 0, to_s = 0;

  double px(double t_s) const {
    return kTimelinePlotLeft +
           (t_s - from_s) / (to_s - from_s) * (kTimelinePlotRight - kTimelinePlotLeft);
  }
};

// The window itself, or for the whole run 0 to the last event's end (a millisecond when there
// is no event, so that the axis still has a length).
TimeAxis axis_of(const Timeline& timeline, const TimeWindow& window) {
  if (!window.whole_run()) return {window.from_s, window.to_s};
  double end_s = 0;
  for (const TimelineEvent& e : timeline.events) end_s = std::max(end_s, e.end_s);
  return {0, end_s > 0 ? end_s : 1e-3};
}

// One rectangle: an event, or consecutive events of one category merged; x in pixels.
struct Bar {
  double x0 = 0, x1 = 0;
  const TimelineEvent* first = nullptr;
  int events = 0;
};

// A track's bars: its events inside the window, cut at its ends, by start time, merged where
// they would touch on screen.
std::vector<Bar> bars_of(std::vector<const TimelineEvent*> events, const TimeAxis& axis) {
  std::erase_if(events, [&](const TimelineEvent* e) {
    return e->end_s <= axis.from_s || e->start_s >= axis.to_s;
  });
  std::stable_sort(events.begin(), events.end(),
                   [](const auto* a, const auto* b) { return a->start_s < b->start_s; });
  std::vector<Bar> bars;
  for (const TimelineEvent* e : events) {
    const double x0 = axis.px(std::max(e->start_s, axis.from_s));
    const double x1 = axis.px(std::min(e->end_s, axis.to_s));
    if (!bars.empty() && bars.back().first->category == e->category &&
        x0 - bars.back().x1 < kMergeGap) {
      bars.back().x1 = std::max(bars.back().x1, x1);
      ++bars.back().events;
    } else {
      bars.push_back({x0, x1, e, 1});
    }
  }
  return bars;
}

// "12.345 ms", or "3.2 us" for what lasts under a millisecond.
std::string duration_text(double seconds) {
  return seconds < 1e-3 ? fmt::format("{:.1f} us", seconds * 1e6)
                        : fmt::format("{:.3f} ms", seconds * 1e3);
}

std::string bar_svg(const Bar& bar, double row_top) {
  const std::string rect = fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\"", bar.x0,
      row_top + (kRowHeight - kBarHeight) / 2, std::max(bar.x1 - bar.x0, kMinBarWidth),
      kBarHeight, colour_of(bar.first->category));
  if (bar.events > 1) return rect + "/>\n";
  return fmt::format("{}><title>{} ({})</title></rect>\n", rect, xml_escape(bar.first->name),
                     duration_text(bar.first->end_s - bar.first->start_s));
}

// Grid lines and labels at round milliseconds (five to ten across), and the axis's caption.
std::string time_axis_svg(const TimeAxis& axis, double rows_top, double rows_bottom) {
  const double from_ms = axis.from_s * 1e3, to_ms = axis.to_s * 1e3;
  const double step_ms = tick_step((to_ms - from_ms) / 2);
  std::string out;
  // Whole multiples of the step, so that no error accumulates along the axis (and the first
  // tick is 0, not -0).
  const auto first = static_cast<long long>(std::ceil(from_ms / step_ms - 1e-9));
  for (long long k = first; static_cast<double>(k) * step_ms <= to_ms * (1 + 1e-12); ++k) {
    const double tick_ms = static_cast<double>(k) * step_ms;
    const double x = axis.px(tick_ms / 1e3);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#dddddd\"/>\n"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4:g}</text>\n",
        x, rows_top, rows_bottom, rows_bottom + 14, tick_ms);
  }
  out += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{2:.1f}\" x2=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"black\"/>\n"
      "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"middle\">simulated time (ms)</text>\n",
      kTimelinePlotLeft, kTimelinePlotRight, rows_bottom,
      (kTimelinePlotLeft + kTimelinePlotRight) / 2, rows_bottom + 30);
  return out;
}

double panel_height(size_t tracks) {
  return kPanelTitleHeight + kRowHeight * static_cast<double>(tracks) + kAxisHeight + kPanelGap;
}

// The title, then a row per track: a stripe on every other row to follow it across, the
// track's name, its bars; then the time axis.
std::string panel_svg(const Timeline& timeline, const std::vector<Track>& tracks,
                      const TimeAxis& axis, double top) {
  std::string out = fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"14\">{}</text>\n",
                                kTimelineMargin, top + 18, xml_escape(timeline.title));
  const double rows_top = top + kPanelTitleHeight;
  const double rows_bottom = rows_top + kRowHeight * static_cast<double>(tracks.size());
  for (size_t r = 1; r < tracks.size(); r += 2) {
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"#f4f4f4\"/>\n",
        kTimelinePlotLeft, rows_top + kRowHeight * static_cast<double>(r),
        kTimelinePlotRight - kTimelinePlotLeft, kRowHeight);
  }
  out += time_axis_svg(axis, rows_top, rows_bottom);
  for (size_t r = 0; r < tracks.size(); ++r) {
    const double row_top = rows_top + kRowHeight * static_cast<double>(r);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                       kTimelinePlotLeft - 6, row_top + 11, xml_escape(tracks[r].name));
    for (const Bar& bar : bars_of(tracks[r].events, axis)) out += bar_svg(bar, row_top);
  }
  return out;
}

}  // namespace

std::string timeline_svg(const std::vector<Timeline>& timelines, const TimeWindow& window) {
  const TimelineLegend legend = timeline_legend_of(categories_present(timelines));
  std::string panels;
  double y = legend.bottom;
  for (const Timeline& timeline : timelines) {
    const std::vector<Track> tracks = sim::tracks_of(timeline);
    panels += panel_svg(timeline, tracks, axis_of(timeline, window), y);
    y += panel_height(tracks.size());
  }
  const double height = y + kTimelineMargin;
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" "
                     "height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
                     "font-family=\"sans-serif\" font-size=\"11\">\n"
                     "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                     kTimelineWidth, height) +
         legend.svg + panels + "</svg>\n";
}

}  // namespace gpuscale::report
