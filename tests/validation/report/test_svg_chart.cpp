// The chart renderer shared by `gpuscale validate --plot` and the sweep figures: well-formed SVG,
// the same bytes for the same chart, text escaped, and a canvas that makes room for long legends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "tests/validation/report/svg_check.hpp"
#include "validation/report/svg_chart.hpp"

namespace gpuscale::report {
namespace {

using ::testing::HasSubstr;

LineChart speedup_chart() {
  LineChart chart{"lenet: speedup <P2P & NCCL>", "GPUs", "speedup", {"1", "2", "4", "8"}, {}};
  chart.series.push_back(
      {"ideal", "#999999", true, true, Marker::None, {{0, 1}, {1, 2}, {2, 4}, {3, 8}}, {}});
  chart.series.push_back({"p2p", "#1f77b4", false, true, Marker::Circle,
                          {{0, 1}, {1, 1.8}, {3, 5.5}}, {{1, 1}, {1.7, 1.9}, {5.0, 9.5}}});
  return chart;
}

BarChart stacked_chart(const std::string& legend_label) {
  BarChart chart{"breakdown", "ms", {}, {{legend_label, "#1f77b4", 1}}};
  chart.groups.push_back({"1 GPU", {{{{10, "#1f77b4", 1}, {5, "#1f77b4", 0.3}}}}});
  chart.groups.push_back({"8 GPUs", {{{{10, "#1f77b4", 1}, {9, "#1f77b4", 0.3}}}, {}}});
  return chart;
}

double canvas_width(const std::string& svg) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex("width=\"([0-9.]+)\"")));
  return std::stod(m[1]);
}

TEST(SvgChart, LineChartIsWellFormedTheSameBytesAndEscapesText) {
  const std::string svg = render_svg(speedup_chart());
  testing::expect_well_formed_svg(svg, "line chart");
  EXPECT_EQ(render_svg(speedup_chart()), svg);
  EXPECT_THAT(svg, HasSubstr("lenet: speedup &lt;P2P &amp; NCCL&gt;"));
  EXPECT_THAT(svg, HasSubstr(">p2p</text>"));
  EXPECT_THAT(svg, HasSubstr("stroke-dasharray"));  // the dashed ideal line
}

TEST(SvgChart, ABandShadesEachLinesIntervalAndRaisesTheAxis) {
  const std::string svg = render_svg(speedup_chart());
  // One polygon for p2p's band (the ideal line has none), in p2p's colour, shaded.
  EXPECT_THAT(svg, HasSubstr("<polygon points=\""));
  EXPECT_THAT(svg, HasSubstr("fill=\"#1f77b4\" fill-opacity=\"0.2\""));
  // The band's top, 9.5, lies above every line's points (8 at most): the axis makes room.
  LineChart without = speedup_chart();
  without.series[1].band.clear();
  EXPECT_THAT(render_svg(without), ::testing::Not(HasSubstr("fill-opacity=\"0.2\"")));
  EXPECT_NE(render_svg(without), svg);
}

TEST(SvgChart, StackedBarsDrawOneRectanglePerSegment) {
  const std::string svg = render_svg(stacked_chart("p2p"));
  testing::expect_well_formed_svg(svg, "bar chart");
  // The background, four segments and one legend swatch; an empty bar draws nothing.
  size_t rects = 0;
  for (size_t at = svg.find("<rect "); at != std::string::npos; at = svg.find("<rect ", at + 1))
    ++rects;
  EXPECT_EQ(rects, 1u + 4 + 1);
}

TEST(SvgChart, TheCanvasWidensForALongLegendLabelOnly) {
  EXPECT_EQ(canvas_width(render_svg(stacked_chart("p2p"))), 800);
  const std::string label(60, 'x');
  EXPECT_GT(canvas_width(render_svg(stacked_chart(label))), 800);
}

}  // namespace
}  // namespace gpuscale::report
