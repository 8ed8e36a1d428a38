// A run's timeline as an SVG Gantt chart (`gpuscale run --timeline`), on hand-made timelines:
// well-formed, the same bytes for the same input, rows in their tracks' order, rectangles where
// the time scale puts them, cut to the window, and merged only where they would touch on screen.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/validation/report/svg_check.hpp"
#include "validation/report/timeline_svg.hpp"

namespace gpuscale::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kMs = 1e-3;
constexpr double kPlotWidth = kTimelinePlotRight - kTimelinePlotLeft;

sim::TimelineEvent event(const std::string& track, const std::string& name,
                         const std::string& category, double start_s, double end_s) {
  sim::TimelineEvent e;
  e.track = track;
  e.name = name;
  e.category = category;
  e.start_s = start_s;
  e.end_s = end_s;
  return e;
}

// An event's bar, as the chart draws it.
struct Bar {
  double x = 0, y = 0, width = 0;
  std::string fill;
  std::string title;  // empty for a bar that stands for several events
};

// The bars in the order drawn. The legend's swatches are 14 wide, written without decimals,
// where a bar's width has one.
std::vector<Bar> bars_of(const std::string& svg) {
  static const std::regex kBar(
      "<rect x=\"([0-9.]+)\" y=\"([0-9.]+)\" width=\"([0-9]+\\.[0-9])\" height=\"10\" "
      "fill=\"(#[0-9a-f]{6})\"(?:/>|><title>([^<]*)</title></rect>)");
  std::vector<Bar> bars;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), kBar);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    bars.push_back({std::stod(m[1]), std::stod(m[2]), std::stod(m[3]), m[4], m[5]});
  }
  return bars;
}

// Where the time axis puts `t_s` in `window`.
double x_of(double t_s, const TimeWindow& window) {
  return kTimelinePlotLeft + (t_s - window.from_s) / (window.to_s - window.from_s) * kPlotWidth;
}

sim::Timeline two_gpus() {
  return {"lenet nccl 2 GPUs batch 16",
          {event("gpu0 kernels", "fwd conv1", "forward", 0, 2 * kMs),
           event("gpu1 kernels", "fwd conv1", "forward", 0, 3 * kMs),
           event("gpu0 kernels", "bwd conv1", "backward", 2 * kMs, 4 * kMs),
           event("gpu0 copies", "nccl 1 MB to gpu1", "transfer", 4 * kMs, 6 * kMs),
           event("nvlink gpu0>gpu1", "nccl 1 MB gpu0>gpu1", "link", 4 * kMs, 6 * kMs)}};
}

TEST(TimelineSvg, IsWellFormedTheSameBytesAndEscapesNames) {
  sim::Timeline timeline = two_gpus();
  timeline.title = "a <b> & c";
  timeline.events.push_back(event("gpu0 <copies> & more", "copy <x> & y", "copy", 0, kMs));
  const std::string svg = timeline_svg({timeline}, {});
  testing::expect_well_formed_svg(svg, "timeline");
  EXPECT_EQ(timeline_svg({timeline}, {}), svg);
  EXPECT_THAT(svg, HasSubstr(">a &lt;b&gt; &amp; c</text>"));
  EXPECT_THAT(svg, HasSubstr(">gpu0 &lt;copies&gt; &amp; more</text>"));
  EXPECT_THAT(svg, HasSubstr("<title>copy &lt;x&gt; &amp; y (1.000 ms)</title>"));
  EXPECT_THAT(svg, HasSubstr(">nvlink gpu0&gt;gpu1</text>"));
  EXPECT_THAT(svg, HasSubstr("width=\"1100\""));
}

// Known categories in a fixed order, then others (grey) as they first appear.
TEST(TimelineSvg, TheLegendNamesTheCategoriesPresentOnlyKnownOnesFirst) {
  sim::Timeline timeline = two_gpus();
  timeline.events.insert(timeline.events.begin(), event("host", "start-up", "setup", 0, kMs));
  const std::string svg = timeline_svg({timeline}, {});
  size_t previous = 0;
  for (const char* category : {"forward", "backward", "transfer", "link", "setup"}) {
    const size_t at = svg.find(std::string(">") + category + "</text>");
    ASSERT_NE(at, std::string::npos) << category;
    EXPECT_GT(at, previous) << category;
    previous = at;
  }
  EXPECT_THAT(svg, Not(HasSubstr(">reduction</text>")));
  EXPECT_THAT(svg, Not(HasSubstr(">update</text>")));
}

TEST(TimelineSvg, RowsComeInTheOrderTheirTracksFirstAppear) {
  const std::string svg = timeline_svg({two_gpus()}, {});
  const size_t gpu0 = svg.find(">gpu0 kernels</text>"), gpu1 = svg.find(">gpu1 kernels</text>");
  const size_t copies = svg.find(">gpu0 copies</text>");
  const size_t link = svg.find(">nvlink gpu0&gt;gpu1</text>");
  ASSERT_NE(link, std::string::npos);
  EXPECT_LT(gpu0, gpu1);
  EXPECT_LT(gpu1, copies);
  EXPECT_LT(copies, link);
  // gpu0's two kernels share its row; gpu1's kernel is one row (14 px) lower.
  const std::vector<Bar> bars = bars_of(svg);
  ASSERT_EQ(bars.size(), 5u);
  EXPECT_EQ(bars[0].y, bars[1].y);
  EXPECT_DOUBLE_EQ(bars[2].y, bars[0].y + 14);
}

TEST(TimelineSvg, ABarsXAndWidthFollowTheWindowsTimeScale) {
  const TimeWindow window{1 * kMs, 5 * kMs};
  const sim::Timeline timeline{"t", {event("gpu0 kernels", "k", "forward", 2 * kMs, 3 * kMs)}};
  const std::vector<Bar> bars = bars_of(timeline_svg({timeline}, window));
  ASSERT_EQ(bars.size(), 1u);
  EXPECT_NEAR(bars[0].x, x_of(2 * kMs, window), 0.05);
  EXPECT_NEAR(bars[0].width, kPlotWidth / 4, 0.05);
  EXPECT_EQ(bars[0].title, "k (1.000 ms)");
}

TEST(TimelineSvg, TheWholeRunRunsFromZeroToTheLastEnd) {
  const std::vector<Bar> bars = bars_of(timeline_svg({two_gpus()}, {}));
  ASSERT_EQ(bars.size(), 5u);
  const TimeWindow run{0, 6 * kMs};
  EXPECT_NEAR(bars[1].x, x_of(2 * kMs, run), 0.05);  // gpu0's backward
  EXPECT_NEAR(bars[4].x + bars[4].width, kTimelinePlotRight, 0.05);  // the link's transfer
}

TEST(TimelineSvg, TheWindowCutsEventsAtItsEndsAndLeavesOutThoseOutside) {
  const TimeWindow window{1 * kMs, 3 * kMs};
  const sim::Timeline timeline{"t",
                               {event("gpu0 kernels", "before", "forward", 0, 0.5 * kMs),
                                event("gpu0 kernels", "across start", "forward", 0, 2 * kMs),
                                event("gpu0 kernels", "across end", "backward", 2.5 * kMs, 4 * kMs),
                                event("gpu0 kernels", "after", "backward", 3.5 * kMs, 4 * kMs)}};
  const std::string svg = timeline_svg({timeline}, window);
  const std::vector<Bar> bars = bars_of(svg);
  ASSERT_EQ(bars.size(), 2u) << svg;
  EXPECT_NEAR(bars[0].x, kTimelinePlotLeft, 0.05);
  EXPECT_NEAR(bars[0].width, kPlotWidth / 2, 0.05);
  EXPECT_EQ(bars[0].title, "across start (2.000 ms)");  // the event's own duration
  EXPECT_NEAR(bars[1].x, x_of(2.5 * kMs, window), 0.05);
  EXPECT_NEAR(bars[1].x + bars[1].width, kTimelinePlotRight, 0.05);
  EXPECT_THAT(svg, Not(HasSubstr("before")));
  EXPECT_THAT(svg, Not(HasSubstr("after")));
}

TEST(TimelineSvg, EventsOfACategoryUnderHalfAPixelApartMergeAndOthersDoNot) {
  const TimeWindow window{0, 1};
  const double pixel_s = 1 / kPlotWidth;
  const sim::Timeline timeline{
      "t",
      {event("gpu0 kernels", "a", "forward", 0, 0.1),
       event("gpu0 kernels", "b", "forward", 0.1 + 0.4 * pixel_s, 0.2),     // merges with a
       event("gpu0 kernels", "c", "backward", 0.2, 0.3),                     // another category
       event("gpu0 kernels", "d", "backward", 0.3 + 0.6 * pixel_s, 0.4)}};  // too far from c
  const std::vector<Bar> bars = bars_of(timeline_svg({timeline}, window));
  ASSERT_EQ(bars.size(), 3u);
  EXPECT_NEAR(bars[0].x, kTimelinePlotLeft, 0.05);
  EXPECT_NEAR(bars[0].width, 0.2 * kPlotWidth, 0.05);
  EXPECT_EQ(bars[0].title, "");  // a bar of two events has no single name
  EXPECT_EQ(bars[1].title, "c (100.000 ms)");
  EXPECT_EQ(bars[2].title, "d (99.326 ms)");
  EXPECT_NE(bars[0].fill, bars[1].fill);
}

TEST(TimelineSvg, AnEventShorterThanAPixelIsStillDrawnAPixelWide) {
  const sim::Timeline timeline{"t", {event("gpu0 kernels", "tiny", "update", 0.5, 0.5 + 1e-6)}};
  const std::vector<Bar> bars = bars_of(timeline_svg({timeline}, {0, 1}));
  ASSERT_EQ(bars.size(), 1u);
  EXPECT_EQ(bars[0].width, 1.0);
  EXPECT_EQ(bars[0].title, "tiny (1.0 us)");
}

TEST(TimelineSvg, TwoTimelinesGiveTwoPanelsEachOnItsOwnAxis) {
  const sim::Timeline short_run{"1 GPU", {event("gpu0 kernels", "k", "forward", 0, 10 * kMs)}};
  const sim::Timeline long_run{"8 GPUs", {event("gpu0 kernels", "k", "forward", 0, 100 * kMs)}};
  const std::string svg = timeline_svg({short_run, long_run}, {});
  testing::expect_well_formed_svg(svg, "two panels");
  const size_t first = svg.find(">1 GPU</text>"), second = svg.find(">8 GPUs</text>");
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(first, second);
  // Each panel's event fills its own axis; the axes end at 10 and 100 ms.
  const std::vector<Bar> bars = bars_of(svg);
  ASSERT_EQ(bars.size(), 2u);
  EXPECT_NEAR(bars[0].width, kPlotWidth, 0.05);
  EXPECT_NEAR(bars[1].width, kPlotWidth, 0.05);
  EXPECT_GT(bars[1].y, bars[0].y);
  EXPECT_THAT(svg.substr(0, second), HasSubstr(">10</text>"));
  EXPECT_THAT(svg.substr(second), HasSubstr(">100</text>"));
}

}  // namespace
}  // namespace gpuscale::report
