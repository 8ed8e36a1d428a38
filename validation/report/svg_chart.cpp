#include "validation/report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "validation/report/svg_text.hpp"

namespace gpuscale::report {

double tick_step(double max) {
  if (max <= 0) return 1;
  const double rough = max / 5;
  const double magnitude = std::pow(10, std::floor(std::log10(rough)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * magnitude >= rough) return m * magnitude;
  }
  return 10 * magnitude;
}

namespace {

// Canvas and plot area, in pixels; the legend sits right of the plot.
constexpr double kWidth = 800, kHeight = 420;
constexpr double kLeft = 70, kRight = 540, kTop = 50, kBottom = 360;

// The y axis from 0 to a whole number of ticks above `max`.
struct YAxis {
  double step, top;
  explicit YAxis(double max)
      : step(tick_step(max)), top(std::max(1.0, std::ceil(max / step)) * step) {}
  double px(double y) const { return kBottom - (kBottom - kTop) * y / top; }
};

// Rough text widths, in pixels per character, to make room for labels.
constexpr double kLegendCharWidth = 7, kTitleCharWidth = 8.5;

// A title centred over the plot, or from the canvas's left edge when it is too long for that.
bool title_fits_centred(const std::string& title) {
  return kTitleCharWidth * static_cast<double>(title.size()) <= kLeft + kRight - 20;
}

// The canvas is kWidth wide, or wider when the longest legend label or the title would run past.
double canvas_width(const std::string& title, const std::vector<std::string>& legend_labels) {
  size_t longest = 0;
  for (const std::string& label : legend_labels) longest = std::max(longest, label.size());
  return std::max({kWidth, kRight + 40 + kLegendCharWidth * static_cast<double>(longest) + 10,
                   20 + kTitleCharWidth * static_cast<double>(title.size())});
}

std::string open_svg(const std::string& title, const std::string& y_label, const YAxis& y,
                     double width) {
  const bool centred = title_fits_centred(title);
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 "
      "{:.0f} {:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{:.1f}\" y=\"24\" text-anchor=\"{}\" font-size=\"15\">{}</text>\n",
      width, kHeight, width, kHeight, centred ? (kLeft + kRight) / 2 : 10.0,
      centred ? "middle" : "start", xml_escape(title));
  for (double v = 0; v <= y.top + y.step / 2; v += y.step) {
    out += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#dddddd\"/>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n",
        kLeft, y.px(v), kRight, y.px(v), kLeft - 6, y.px(v) + 4, v);
  }
  out += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"black\"/>\n"
      "<line x1=\"{0:.1f}\" y1=\"{2:.1f}\" x2=\"{3:.1f}\" y2=\"{2:.1f}\" stroke=\"black\"/>\n"
      "<text transform=\"translate(18 {4:.1f}) rotate(-90)\" text-anchor=\"middle\">{5}</text>\n",
      kLeft, kTop, kBottom, kRight, (kTop + kBottom) / 2, xml_escape(y_label));
  return out;
}

std::string category_label(double x, const std::string& label) {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x,
                     kBottom + 18, xml_escape(label));
}

std::string marker_svg(Marker marker, double x, double y, const std::string& colour) {
  switch (marker) {
    case Marker::Square:
      return fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\" fill=\"{}\"/>\n",
                         x - 4, y - 4, colour);
    case Marker::Triangle:  // pointing down: an upper bound
      return fmt::format(
          "<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" fill=\"none\" "
          "stroke=\"{}\" "
          "stroke-width=\"1.5\"/>\n",
          x - 5, y - 4, x + 5, y - 4, x, y + 5, colour);
    case Marker::None:
      return "";
    case Marker::Circle:
      break;
  }
  return fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n", x, y, colour);
}

std::string legend_svg(const std::vector<LegendEntry>& entries) {
  std::string out;
  double y = kTop + 6;
  for (const LegendEntry& e : entries) {
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\" "
        "fill-opacity=\"{:.2f}\"/>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        kRight + 20, y - 9, e.colour, e.opacity, kRight + 40, y, xml_escape(e.label));
    y += 18;
  }
  return out;
}

// A line chart's legend: a stroke of each series' style with its marker.
std::string line_legend_svg(const std::vector<LineSeries>& series) {
  std::string out;
  double y = kTop + 6;
  for (const LineSeries& s : series) {
    if (s.line) {
      out += fmt::format(
          "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
          "stroke-width=\"2\"{}/>\n",
          kRight + 14, y - 4, kRight + 34, y - 4, s.colour,
          s.dashed ? " stroke-dasharray=\"6 4\"" : "");
    }
    out += marker_svg(s.marker, kRight + 24, y - 4, s.colour);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", kRight + 40, y,
                       xml_escape(s.label));
    y += 18;
  }
  return out;
}

// A series' band: the polygon along the highs left to right and back along the lows, shaded;
// a lone point's interval is a vertical bar.
template <class XPixels>
std::string band_svg(const LineSeries& s, XPixels x_px, const YAxis& y_axis) {
  if (s.points.size() == 1) {
    const double x = x_px(s.points[0].first);
    return fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                       "stroke=\"{}\" stroke-width=\"6\" stroke-opacity=\"0.25\"/>\n",
                       x, y_axis.px(s.band[0].first), x, y_axis.px(s.band[0].second), s.colour);
  }
  std::string points;
  for (size_t i = 0; i < s.points.size(); ++i) {
    points += fmt::format("{:.1f},{:.1f} ", x_px(s.points[i].first), y_axis.px(s.band[i].second));
  }
  for (size_t i = s.points.size(); i-- > 0;) {
    points += fmt::format("{:.1f},{:.1f} ", x_px(s.points[i].first), y_axis.px(s.band[i].first));
  }
  points.pop_back();
  return fmt::format("<polygon points=\"{}\" fill=\"{}\" fill-opacity=\"0.2\" stroke=\"none\"/>\n",
                     points, s.colour);
}

}  // namespace

std::string render_svg(const LineChart& chart) {
  double max = 0;
  for (const LineSeries& s : chart.series) {
    for (const auto& [x, y] : s.points) max = std::max(max, y);
    for (const auto& [low, high] : s.band) max = std::max(max, high);
  }
  const YAxis y_axis(max);
  const double slot =
      (kRight - kLeft) / static_cast<double>(std::max<size_t>(1, chart.categories.size()));
  auto x_px = [&](int category) { return kLeft + slot * (category + 0.5); };
  std::vector<std::string> labels;
  for (const LineSeries& s : chart.series) labels.push_back(s.label);
  std::string out =
      open_svg(chart.title, chart.y_label, y_axis, canvas_width(chart.title, labels));
  for (size_t i = 0; i < chart.categories.size(); ++i)
    out += category_label(x_px(static_cast<int>(i)), chart.categories[i]);
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                     (kLeft + kRight) / 2, kBottom + 38, xml_escape(chart.x_label));
  for (const LineSeries& s : chart.series) {
    if (s.band.size() == s.points.size() && !s.points.empty()) out += band_svg(s, x_px, y_axis);
    if (s.line && s.points.size() > 1) {
      std::string points;
      for (const auto& [x, y] : s.points)
        points += fmt::format("{:.1f},{:.1f} ", x_px(x), y_axis.px(y));
      points.pop_back();
      out += fmt::format(
          "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", points,
          s.colour, s.dashed ? " stroke-dasharray=\"6 4\"" : "");
    }
    for (const auto& [x, y] : s.points)
      out += marker_svg(s.marker, x_px(x), y_axis.px(y), s.colour);
  }
  return out + line_legend_svg(chart.series) + "</svg>\n";
}

std::string render_svg(const BarChart& chart) {
  double max = 0;
  size_t most_bars = 1;
  for (const BarGroup& g : chart.groups) {
    most_bars = std::max(most_bars, g.bars.size());
    for (const Bar& b : g.bars) {
      double height = 0;
      for (const BarSegment& s : b.segments) height += s.value;
      max = std::max(max, height);
    }
  }
  const YAxis y_axis(max);
  const double slot =
      (kRight - kLeft) / static_cast<double>(std::max<size_t>(1, chart.groups.size()));
  const double bar_width = slot * 0.8 / static_cast<double>(most_bars);
  std::vector<std::string> labels;
  for (const LegendEntry& e : chart.legend) labels.push_back(e.label);
  std::string out =
      open_svg(chart.title, chart.y_label, y_axis, canvas_width(chart.title, labels));
  for (size_t gi = 0; gi < chart.groups.size(); ++gi) {
    const BarGroup& group = chart.groups[gi];
    const double group_left = kLeft + slot * static_cast<double>(gi) + slot * 0.1;
    out += category_label(kLeft + slot * (static_cast<double>(gi) + 0.5), group.label);
    for (size_t bi = 0; bi < group.bars.size(); ++bi) {
      double base = 0;
      for (const BarSegment& s : group.bars[bi].segments) {
        const double top = y_axis.px(base + s.value);
        out += fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
            "fill-opacity=\"{:.2f}\"/>\n",
            group_left + bar_width * static_cast<double>(bi), top, bar_width * 0.9,
            y_axis.px(base) - top, s.colour, s.opacity);
        base += s.value;
      }
    }
  }
  return out + legend_svg(chart.legend) + "</svg>\n";
}

}  // namespace gpuscale::report
