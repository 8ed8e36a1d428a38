#include "validation/report/topology_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "validation/report/svg_text.hpp"
#include "validation/report/topology_layout.hpp"

namespace gpuscale::report {
namespace {

using topo::DeviceKind;
using topo::LinkKind;

constexpr double kTitleHeight = 36;
constexpr double kCaptionHeight = 16;
constexpr double kLegendHeight = 56;
constexpr double kCharWidth = 6.5;  // a rough width of one character at 11 px, to lay out text
constexpr double kTitleCharWidth = 8.5;  // at 15 px

// Five steps of ColorBrewer's YlOrRd, lightest left out so that the first step still shows on
// white; kIdle is paler than all of them.
constexpr std::array<const char*, 5> kHeatSteps = {"#fed976", "#feb24c", "#fd8d3c", "#e31a1c",
                                                   "#b10026"};
constexpr const char* kIdle = "#d9d9d9";

const char* device_fill(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Gpu:
      return "#a6d96a";
    case DeviceKind::Cpu:
      return "#9ecae1";
    case DeviceKind::Nic:
      return "#fdd0a2";
    case DeviceKind::NvSwitch:
      return "#c7e9c0";
    case DeviceKind::NetworkSwitch:
      return "#dadaeb";
    case DeviceKind::PcieSwitch:
      break;
  }
  return "#f0f0f0";
}

const char* kind_colour(LinkKind kind) {
  switch (kind) {
    case LinkKind::NvLink:
      return "#4d9221";
    case LinkKind::Pcie:
      return "#636363";
    case LinkKind::Qpi:
    case LinkKind::Upi:
    case LinkKind::XBus:
      return "#2171b5";
    case LinkKind::InfiniBand:
    case LinkKind::Ethernet:
      break;
  }
  return "#d94801";
}

const char* heat_colour(double utilisation) {
  const int step = std::clamp(static_cast<int>(utilisation * 5), 0, 4);
  return kHeatSteps[static_cast<size_t>(step)];
}

std::string percent(double utilisation) {
  if (utilisation <= 0) return "0%";
  if (utilisation * 100 < 1) return "<1%";
  return fmt::format("{:.0f}%", utilisation * 100);
}

// The larger share of each link's two directions (0: idle), and each direction's share.
struct LinkLoads {
  std::vector<double> busiest, forward, backward;
};

LinkLoads loads_of(const topo::Topology& machine, const std::vector<sim::LinkUse>& uses) {
  const size_t links = machine.links().size();
  LinkLoads loads{std::vector<double>(links, 0), std::vector<double>(links, 0),
                  std::vector<double>(links, 0)};
  for (const sim::LinkUse& use : uses) {
    const auto l = static_cast<size_t>(use.link);
    (use.forward ? loads.forward : loads.backward).at(l) += use.utilisation;
    loads.busiest[l] = std::max(loads.forward[l], loads.backward[l]);
  }
  return loads;
}

// Labels go where they overlap neither a device nor another label.
class LabelPlacer {
 public:
  explicit LabelPlacer(const TopologyLayout& layout) {
    for (const auto& centre : layout.centre) {
      if (centre) taken_.push_back({centre->x, centre->y, kBoxWidth + 4, kBoxHeight + 4});
    }
  }

  Point place(const std::vector<Point>& candidates, const std::string& text) {
    const double width = kCharWidth * static_cast<double>(text.size()) + 4;
    for (const Point& p : candidates) {
      const Area area{p.x, p.y, width, 14};
      if (std::none_of(taken_.begin(), taken_.end(),
                       [&](const Area& t) { return overlaps(area, t); })) {
        taken_.push_back(area);
        return p;
      }
    }
    taken_.push_back({candidates.front().x, candidates.front().y, width, 14});
    return candidates.front();
  }

 private:
  struct Area {
    double x, y, width, height;  // centred on (x, y)
  };
  static bool overlaps(const Area& a, const Area& b) {
    return std::abs(a.x - b.x) * 2 < a.width + b.width &&
           std::abs(a.y - b.y) * 2 < a.height + b.height;
  }
  std::vector<Area> taken_;
};

std::string device_svg(const topo::Device& device, Point centre) {
  return fmt::format(
      "<g><title>{0}: {1}, {2}</title><rect x=\"{3:.1f}\" y=\"{4:.1f}\" width=\"{5:.0f}\" "
      "height=\"{6:.0f}\" rx=\"4\" fill=\"{7}\" stroke=\"#333333\"/>"
      "<text x=\"{8:.1f}\" y=\"{9:.1f}\" text-anchor=\"middle\">{0}</text></g>\n",
      xml_escape(device.name), to_string(device.kind), xml_escape(device.model),
      centre.x - kBoxWidth / 2, centre.y - kBoxHeight / 2, kBoxWidth, kBoxHeight,
      device_fill(device.kind), centre.x, centre.y + 4);
}

std::string label_svg(Point at, const std::string& text) {
  return fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"10\" stroke=\"white\" "
      "stroke-width=\"3\" paint-order=\"stroke\">{}</text>\n",
      at.x, at.y + 3.5, xml_escape(text));
}

// The legend's entries, left to right from `x` at height `y`: a line sample and its text.
std::string legend_svg(const std::vector<std::pair<std::string, std::string>>& entries, double x,
                       double y, double line_width) {
  std::string out;
  for (const auto& [colour, text] : entries) {
    out += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"{:.1f}\"/>\n<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        x, y - 4, x + 24, y - 4, colour, line_width, x + 30, y, xml_escape(text));
    x += 30 + kCharWidth * static_cast<double>(text.size()) + 18;
  }
  return out;
}

double legend_width(const std::vector<std::pair<std::string, std::string>>& entries) {
  double width = 0;
  for (const auto& entry : entries)
    width += 30 + kCharWidth * static_cast<double>(entry.second.size()) + 18;
  return width;
}

// The legend's entries (colour, text) and the note under them.
struct Legend {
  std::vector<std::pair<std::string, std::string>> entries;
  std::string note;
};

Legend legend_of(bool heat, const std::map<LinkKind, int>& kinds) {
  Legend legend;
  if (heat) {
    for (size_t step = 0; step < kHeatSteps.size(); ++step) {
      legend.entries.emplace_back(kHeatSteps[step],
                                  fmt::format("{}-{}%", step * 20, step * 20 + 20));
    }
    legend.entries.emplace_back(kIdle, "idle");
    legend.note = "colour and label: the busier direction's share of the link's effective "
                  "bandwidth over an iteration; width: lanes";
  } else {
    for (const auto& [kind, lanes] : kinds) {
      legend.entries.emplace_back(kind_colour(kind), to_string(kind));
    }
    legend.note = "label and width: lanes";
  }
  return legend;
}

// The links' paths, idle ones first so that no busy link hides under an idle one, and their
// labels, which go above the devices.
struct LinkDrawing {
  std::string paths, labels;
};

LinkDrawing draw_links(const topo::Topology& machine, const TopologyLayout& layout,
                       const std::vector<LinkPath>& paths, bool heat, const LinkLoads& loads,
                       const std::map<LinkKind, int>& most_lanes) {
  std::vector<const LinkPath*> order;
  for (const LinkPath& p : paths) {
    if (!heat || loads.busiest[p.link] <= 0) order.push_back(&p);
  }
  for (const LinkPath& p : paths) {
    if (heat && loads.busiest[p.link] > 0) order.push_back(&p);
  }
  LabelPlacer placer(layout);
  LinkDrawing out;
  for (const LinkPath* p : order) {
    const topo::Link& link = machine.links()[p->link];
    const double busiest = loads.busiest[p->link];
    const char* colour =
        !heat ? kind_colour(link.kind) : busiest > 0 ? heat_colour(busiest) : kIdle;
    const double stroke = 1.5 + 3.0 * link.lanes / most_lanes.at(link.kind);
    std::string tooltip = fmt::format("{} {} x{}", link.id, to_string(link.kind), link.lanes);
    if (heat) {
      tooltip += fmt::format(": {} {}->{}, {} back", percent(loads.forward[p->link]),
                             machine.devices()[link.a].name, machine.devices()[link.b].name,
                             percent(loads.backward[p->link]));
    }
    out.paths += fmt::format(
        "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{:.1f}\"><title>{}</title>"
        "</path>\n",
        p->svg_path, colour, stroke, xml_escape(tooltip));
    const std::string label =
        !heat ? fmt::format("x{}", link.lanes) : busiest > 0 ? percent(busiest) : "";
    if (!label.empty()) out.labels += label_svg(placer.place(p->labels, label), label);
  }
  return out;
}

}  // namespace

std::string render_topology_svg(const topo::Topology& machine,
                                const std::vector<sim::LinkUse>& uses, const std::string& title) {
  const TopologyLayout layout = layout_topology(machine);
  const std::vector<LinkPath> paths = route_links(machine, layout);
  const bool heat = !uses.empty();
  std::map<LinkKind, int> most_lanes;
  for (const LinkPath& p : paths) {
    const topo::Link& link = machine.links()[p.link];
    most_lanes[link.kind] = std::max(most_lanes[link.kind], link.lanes);
  }
  const Legend legend = legend_of(heat, most_lanes);

  const double top = kTitleHeight + (layout.left_out.empty() ? 0 : kCaptionHeight);
  double drawing_height = layout.height;
  for (const LinkPath& p : paths) drawing_height = std::max(drawing_height, p.bottom + 10);
  const double width = std::max({layout.width, legend_width(legend.entries) + 40,
                                 kCharWidth * static_cast<double>(legend.note.size()) + 40,
                                 kTitleCharWidth * static_cast<double>(title.size()) + 40});
  const double height = top + drawing_height + kLegendHeight;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2:.1f}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n",
      width, height, width / 2, xml_escape(title));
  if (!layout.left_out.empty()) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#555555\">"
                       "{}</text>\n",
                       width / 2, kTitleHeight + 6, xml_escape(layout.left_out));
  }
  // The drawing, centred under the title.
  out += fmt::format("<g transform=\"translate({:.1f} {:.1f})\">\n", (width - layout.width) / 2,
                     top);
  const LinkDrawing links =
      draw_links(machine, layout, paths, heat, loads_of(machine, uses), most_lanes);
  out += links.paths;
  for (size_t d = 0; d < layout.centre.size(); ++d) {
    if (layout.centre[d]) out += device_svg(machine.devices()[d], *layout.centre[d]);
  }
  out += links.labels + "</g>\n";

  const double legend_y = top + drawing_height + 20;
  out += legend_svg(legend.entries, 20, legend_y, heat ? 6 : 3);
  out += fmt::format("<text x=\"20\" y=\"{:.1f}\" fill=\"#555555\">{}</text>\n", legend_y + 22,
                     xml_escape(legend.note));
  return out + "</svg>\n";
}

}  // namespace gpuscale::report
