// Where a machine's devices go in its picture (topology_svg.hpp), the same place every time.
//
// Rows by device kind, per CPU socket: the socket's CPU, then its PCIe switches, NICs and
// NVSwitches, then its GPUs in device order. A device belongs to the CPU it reaches in the fewest
// hops through switches and NICs. A node whose two sockets both hold GPUs is drawn with the
// second socket mirrored below the first, so the two GPU rows face each other (the DGX-1's
// hybrid cube-mesh: GPUs 0-3 above 4-7); other nodes put their sockets side by side. A switch or
// NIC sits above the GPUs it links to. A cluster draws its first kMaxNodesDrawn nodes side by
// side, under the network switches they link to (leaves) and those the leaves link to (spines).
//
// Links then get a path: straight when that misses every other device; an arc when it joins two
// devices of one row across others; otherwise a detour down a lane left of the node.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topologies/src/topology.hpp"

namespace gpuscale::report {

inline constexpr int kMaxNodesDrawn = 2;
inline constexpr double kBoxWidth = 90, kBoxHeight = 32;  // a device's box, pixels

struct Point {
  double x = 0, y = 0;
};

struct TopologyLayout {
  std::vector<std::optional<Point>> centre;  // per device of the machine; empty: not drawn
  std::vector<int> arc_side;     // per device: -1 an arc from its row bows up, +1 down
  std::vector<int> lane_group;   // per device: which node's detour lanes its links take
  std::vector<double> lane_edge; // per lane group: x left of which its detour lanes run
  double width = 0, height = 0;  // of the devices' boxes and margins, pixels
  std::string left_out;          // what a cluster's picture leaves out; empty when nothing
};

TopologyLayout layout_topology(const topo::Topology& machine);

struct LinkPath {
  int link = 0;
  std::string svg_path;       // the "d" attribute of an SVG <path>
  std::vector<Point> labels;  // where its label may go, best first
  double bottom = 0;          // the lowest point it reaches (an arc may bow below the drawing)
};

// A path for every link whose two devices are drawn, in link order.
std::vector<LinkPath> route_links(const topo::Topology& machine, const TopologyLayout& layout);

}  // namespace gpuscale::report
