// Two small chart types written as SVG text (no plotting library is available): lines over
// categories (GPU counts), optionally with a shaded band per line, and grouped, stacked bars.
// Each has a title, a y axis from 0 with rounded ticks, and a legend on the right; the canvas
// widens for long labels and titles.
// Numbers are printed with fixed decimals, so the same data gives the same bytes.
#pragma once

#include <string>
#include <vector>

namespace gpuscale::report {

enum class Marker { None, Circle, Square, Triangle };

struct LineSeries {
  std::string label;
  std::string colour;  // CSS colour, "#1f77b4"
  bool dashed = false;
  bool line = true;  // false: markers only
  Marker marker = Marker::Circle;
  std::vector<std::pair<int, double>> points;  // (category index, y)
  // Optional: each point's (low, high), drawn as a shaded band of the line's colour (an
  // interval of sampled runs); empty, or one per point.
  std::vector<std::pair<double, double>> band;
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<std::string> categories;  // along x, evenly spaced
  std::vector<LineSeries> series;
};

struct BarSegment {
  double value = 0;
  std::string colour;
  double opacity = 1;
};

struct Bar {
  std::vector<BarSegment> segments;  // stacked from the axis up
};

struct BarGroup {
  std::string label;
  std::vector<Bar> bars;
};

struct LegendEntry {
  std::string label;
  std::string colour;
  double opacity = 1;
};

struct BarChart {
  std::string title, y_label;
  std::vector<BarGroup> groups;
  std::vector<LegendEntry> legend;
};

std::string render_svg(const LineChart& chart);
std::string render_svg(const BarChart& chart);

// A tick step of 1, 2 or 5 x 10^k giving about five ticks from 0 up to `max` (1 when `max` is
// not positive): the charts' y axes here, the timelines' time axes (timeline_svg.hpp).
double tick_step(double max);

}  // namespace gpuscale::report
