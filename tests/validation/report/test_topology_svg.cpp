// Machine pictures and link heat maps: every shipped machine draws as well-formed SVG naming its
// devices, the same bytes every time; a busy link is coloured and labelled with its busier
// direction's share; a cluster draws two nodes and says how many it left out; and
// `gpuscale topo show --format svg` prints one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "tests/support/test_support.hpp"
#include "tests/validation/report/svg_check.hpp"
#include "topologies/src/topology_loader.hpp"
#include "validation/report/topology_layout.hpp"
#include "validation/report/topology_svg.hpp"

namespace gpuscale::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

topo::Topology load(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return topo::Topology::build(topo::load_topology_config(name, overrides));
}

int link_index(const topo::Topology& machine, const std::string& id) {
  for (size_t l = 0; l < machine.links().size(); ++l) {
    if (machine.links()[l].id == id) return static_cast<int>(l);
  }
  ADD_FAILURE() << "no link " << id;
  return 0;
}

// The stroke colour of the path drawn for link `id` (each path carries the link's id in its
// <title>).
std::string stroke_of(const std::string& svg, const std::string& id) {
  const size_t title = svg.find("<title>" + id + " ");
  if (title == std::string::npos) return "<not drawn>";
  const size_t path = svg.rfind("<path ", title);
  std::smatch m;
  const std::string element = svg.substr(path, title - path);
  if (!std::regex_search(element, m, std::regex("stroke=\"([^\"]+)\""))) return "<no stroke>";
  return m[1];
}

TEST(TopologySvg, EveryShippedMachineDrawsEachDeviceOfItsFirstNode) {
  for (const std::string& name : topo::shipped_topologies().names()) {
    const topo::Topology machine = load(name);
    const std::string svg = render_topology_svg(machine, {}, name);
    testing::expect_well_formed_svg(svg, name);
    for (const topo::Device& d : machine.devices()) {
      if (d.node == 0) {
        EXPECT_THAT(svg, HasSubstr(">" + d.name + "</text>")) << name;
      }
    }
    EXPECT_EQ(render_topology_svg(machine, {}, name), svg) << name;  // the same bytes
  }
}

TEST(TopologySvg, PlainPictureColoursLinksByKindAndLabelsTheirLanes) {
  const topo::Topology dgx1 = load("dgx1-v100");
  const std::string svg = render_topology_svg(dgx1, {}, "dgx1");
  EXPECT_NE(stroke_of(svg, "gpu0-gpu3"), stroke_of(svg, "plx0-gpu0"));  // NVLink, PCIe
  EXPECT_EQ(stroke_of(svg, "gpu0-gpu3"), stroke_of(svg, "gpu0-gpu1"));  // both NVLink
  EXPECT_THAT(svg, HasSubstr(">x2</text>"));
  EXPECT_THAT(svg, HasSubstr(">x16</text>"));
}

TEST(TopologySvg, HeatMapColoursAndLabelsABusyLinkByItsBusierDirection) {
  const topo::Topology dgx1 = load("dgx1-v100");
  const int busy = link_index(dgx1, "gpu0-gpu3");
  const int quiet = link_index(dgx1, "gpu4-gpu7");
  const std::vector<sim::LinkUse> uses = {
      {busy, true, 0.10}, {busy, false, 0.42}, {quiet, true, 0.95}};
  const std::string svg = render_topology_svg(dgx1, uses, "dgx1 heat");
  testing::expect_well_formed_svg(svg, "heat map");
  const std::string idle = stroke_of(svg, "gpu0-gpu1");
  EXPECT_EQ(idle, stroke_of(svg, "plx0-gpu0"));  // unused links share one colour, whatever kind
  EXPECT_NE(stroke_of(svg, "gpu0-gpu3"), idle);
  EXPECT_NE(stroke_of(svg, "gpu4-gpu7"), stroke_of(svg, "gpu0-gpu3"));  // 95% is not 42%
  EXPECT_THAT(svg, HasSubstr(">42%</text>"));
  EXPECT_THAT(svg, HasSubstr(">95%</text>"));
  EXPECT_THAT(svg, Not(HasSubstr(">10%</text>")));  // the quieter direction is not the label
  EXPECT_THAT(svg, HasSubstr(">80-100%</text>"));   // the legend's top step
  EXPECT_EQ(render_topology_svg(dgx1, uses, "dgx1 heat"), svg);
}

TEST(TopologySvg, ClusterDrawsTwoNodesAndTheirSwitchesAndSaysWhatItLeftOut) {
  const topo::Topology lassen = load("lassen", {"cluster.nodes=128"});
  const std::string svg = render_topology_svg(lassen, {}, "lassen");
  testing::expect_well_formed_svg(svg, "lassen");
  EXPECT_THAT(svg, HasSubstr("2 of 128 nodes drawn (126 left out)"));
  EXPECT_THAT(svg, HasSubstr(">n1.gpu3</text>"));
  EXPECT_THAT(svg, HasSubstr(">r0.leaf0</text>"));
  EXPECT_THAT(svg, HasSubstr(">r0.spine0</text>"));
  EXPECT_THAT(svg, Not(HasSubstr(">n2.gpu0</text>")));
  EXPECT_THAT(svg, Not(HasSubstr(">r0.leaf1</text>")));  // the leaf of nodes 24..47
}

TEST(TopologyLayout, Dgx1GpusOfOneSocketShareARowAboveTheOtherSocketsGpus) {
  const topo::Topology dgx1 = load("dgx1-v100");
  const TopologyLayout layout = layout_topology(dgx1);
  auto centre = [&](const std::string& name) { return *layout.centre[*dgx1.find_device(name)]; };
  for (const char* gpu : {"gpu1", "gpu2", "gpu3"}) EXPECT_EQ(centre(gpu).y, centre("gpu0").y);
  for (const char* gpu : {"gpu5", "gpu6", "gpu7"}) EXPECT_EQ(centre(gpu).y, centre("gpu4").y);
  EXPECT_GT(centre("gpu4").y, centre("gpu0").y);
  EXPECT_EQ(centre("gpu4").x, centre("gpu0").x);  // the cube's vertical edges are vertical
  EXPECT_LT(centre("cpu0").y, centre("plx0").y);
  EXPECT_LT(centre("plx0").y, centre("gpu0").y);
}

TEST(TopologyLayout, EveryDrawnLinkHasAPathWithALabelPlace) {
  for (const std::string& name : topo::shipped_topologies().names()) {
    const topo::Topology machine = load(name);
    const TopologyLayout layout = layout_topology(machine);
    for (const LinkPath& path : route_links(machine, layout)) {
      EXPECT_TRUE(path.svg_path.starts_with("M")) << name;
      EXPECT_FALSE(path.labels.empty()) << name;
    }
  }
}

TEST(TopoShowCli, FormatSvgPrintsAPictureNamingEveryGpu) {
  const auto r = testing::run_command(std::string(GPUSCALE_EXECUTABLE) +
                                      " topo show dgx1-v100 --format svg");
  ASSERT_EQ(r.status, 0) << r.err;
  testing::expect_well_formed_svg(r.out, "topo show --format svg");
  for (int g = 0; g < 8; ++g) {
    EXPECT_THAT(r.out, HasSubstr(">gpu" + std::to_string(g) + "</text>"));
  }
}

}  // namespace
}  // namespace gpuscale::report
