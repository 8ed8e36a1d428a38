#include "validation/report/topology_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

namespace gpuscale::report {
namespace {

using topo::DeviceKind;

constexpr double kPitch = 120;     // between neighbouring columns, pixels
constexpr double kRowGap = 100;    // between neighbouring rows' centres
constexpr double kLaneRoom = 70;   // left of each node, for its detour lanes
constexpr double kLaneStep = 7;    // between two detour lanes
constexpr double kMargin = 30;
constexpr double kArcBow = 0.3;    // an arc's control point, off its row, per pixel of span
constexpr double kArcBowMax = 1.6 * kRowGap;  // so an arc stays clear of the next row's boxes

// One CPU socket of a node: its devices by kind, in device order.
struct Socket {
  std::vector<int> cpus, middle, gpus;  // middle: switches and NICs
};

// The node's devices by socket (see the header); a node without CPUs is one socket.
std::vector<Socket> sockets_of(const topo::Topology& machine, int node) {
  const auto& devices = machine.devices();
  const int count = static_cast<int>(devices.size());
  std::vector<int> cpus;
  for (int d = 0; d < count; ++d) {
    if (devices[d].node == node && devices[d].kind == DeviceKind::Cpu) cpus.push_back(d);
  }
  constexpr int kUnreached = std::numeric_limits<int>::max();
  std::vector<std::vector<int>> hops(cpus.size(), std::vector<int>(count, kUnreached));
  for (size_t s = 0; s < cpus.size(); ++s) {
    std::deque<int> queue{cpus[s]};
    hops[s][cpus[s]] = 0;
    while (!queue.empty()) {
      const int u = queue.front();
      queue.pop_front();
      for (int l : machine.links_of(u)) {
        const int v = machine.links()[l].other(u);
        if (devices[v].node != node || devices[v].kind == DeviceKind::Cpu ||
            hops[s][v] != kUnreached)
          continue;
        hops[s][v] = hops[s][u] + 1;
        if (devices[v].kind != DeviceKind::Gpu) queue.push_back(v);
      }
    }
  }
  std::vector<Socket> sockets(std::max<size_t>(1, cpus.size()));
  for (int d = 0; d < count; ++d) {
    if (devices[d].node != node) continue;
    size_t nearest = 0;
    for (size_t s = 1; s < cpus.size(); ++s) {
      if (hops[s][d] < hops[nearest][d]) nearest = s;
    }
    Socket& socket = sockets[nearest];
    switch (devices[d].kind) {
      case DeviceKind::Cpu:
        socket.cpus.push_back(d);
        break;
      case DeviceKind::Gpu:
        socket.gpus.push_back(d);
        break;
      default:
        socket.middle.push_back(d);
    }
  }
  return sockets;
}

// The mean of the columns of `device`'s neighbours found in `columns`, if any.
std::optional<double> mean_neighbour_column(const topo::Topology& machine, int device,
                                            const std::map<int, double>& columns) {
  double sum = 0;
  int found = 0;
  for (int l : machine.links_of(device)) {
    const auto it = columns.find(machine.links()[l].other(device));
    if (it == columns.end()) continue;
    sum += it->second;
    ++found;
  }
  if (found == 0) return std::nullopt;
  return sum / found;
}

// Columns (in pitches from the socket's left) of one socket's devices: GPUs 0, 1, ...; a switch
// or NIC over the GPUs it links to, else just right of the switch it hangs from, else right of
// the GPUs; a CPU over what it links to. Neighbours in a row keep at least one pitch apart.
std::map<int, double> socket_columns(const topo::Topology& machine, const Socket& socket) {
  std::map<int, double> columns;
  for (size_t i = 0; i < socket.gpus.size(); ++i) columns[socket.gpus[i]] = static_cast<double>(i);
  std::map<int, double> wanted;
  for (int d : socket.middle) {
    if (auto c = mean_neighbour_column(machine, d, columns)) wanted[d] = *c;
  }
  constexpr double kJustAfter = 0.01;  // orders a NIC after the switch it hangs from
  for (int d : socket.middle) {
    if (wanted.contains(d)) continue;
    if (auto c = mean_neighbour_column(machine, d, wanted)) wanted[d] = *c + kJustAfter;
  }
  std::vector<int> order = socket.middle;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (wanted.contains(a) != wanted.contains(b)) return wanted.contains(a);
    return wanted.contains(a) && wanted.at(a) < wanted.at(b);
  });
  double next = 0;
  for (int d : order) {
    const double column = wanted.contains(d)
                              ? std::max(wanted.at(d), next)
                              : std::max(next, static_cast<double>(socket.gpus.size()));
    columns[d] = column;
    next = column + 1;
  }
  double widest = 0;
  for (const auto& [d, c] : columns) widest = std::max(widest, c);
  for (int d : socket.cpus) {
    columns[d] = mean_neighbour_column(machine, d, columns).value_or(widest / 2);
  }
  return columns;
}

// One node drawn on its own: each device's column and row, and its size in columns and rows.
struct NodeDrawing {
  std::map<int, double> column;
  std::map<int, int> row;
  std::map<int, int> arc_side;
  double columns = 0;
  int rows = 0;
};

NodeDrawing draw_node(const topo::Topology& machine, int node) {
  const std::vector<Socket> sockets = sockets_of(machine, node);
  const bool mirrored =
      sockets.size() == 2 && !sockets[0].gpus.empty() && !sockets[1].gpus.empty();
  NodeDrawing out;
  double socket_left = 0;
  for (const Socket& socket : sockets) {
    double widest = 0;
    for (const auto& [d, c] : socket_columns(machine, socket)) {
      out.column[d] = socket_left + c;
      widest = std::max(widest, c + 1);
    }
    out.columns = std::max(out.columns, socket_left + widest);
    if (!mirrored) socket_left += widest + 0.5;
  }
  // Rows top to bottom, each the tiers (0 CPUs, 1 switches and NICs, 2 GPUs) of some sockets:
  // side by side, the sockets share a row per tier. Rows with no device collapse.
  std::vector<std::vector<std::pair<size_t, int>>> rows;
  if (mirrored) {
    rows = {{{0, 0}}, {{0, 1}}, {{0, 2}}, {{1, 2}}, {{1, 1}}, {{1, 0}}};
  } else {
    for (int tier = 0; tier < 3; ++tier) {
      rows.emplace_back();
      for (size_t s = 0; s < sockets.size(); ++s) rows.back().emplace_back(s, tier);
    }
  }
  for (const auto& parts : rows) {
    bool filled = false;
    for (const auto& [s, tier] : parts) {
      const Socket& socket = sockets[s];
      for (int d : tier == 0 ? socket.cpus : tier == 1 ? socket.middle : socket.gpus) {
        out.row[d] = out.rows;
        filled = true;
      }
    }
    if (filled) ++out.rows;
  }
  // Arcs bow away from the facing GPU rows of a mirrored node, and below a node's bottom row.
  for (const auto& [d, r] : out.row) {
    out.arc_side[d] = mirrored ? (2 * r < out.rows ? -1 : 1) : (r == out.rows - 1 ? 1 : -1);
  }
  return out;
}

// A cluster's network switches that the first `drawn_nodes` nodes link to (leaves), and those
// the leaves link to (spines): rows top to bottom, spines first, each in device order.
std::vector<std::vector<int>> network_rows(const topo::Topology& machine, int drawn_nodes) {
  const auto& devices = machine.devices();
  std::vector<bool> taken(devices.size(), false);
  auto switches_next_to = [&](const std::vector<int>& from) {
    std::vector<int> found;
    for (int d : from) {
      for (int l : machine.links_of(d)) {
        const int v = machine.links()[l].other(d);
        if (devices[v].node >= 0 || taken[v]) continue;
        taken[v] = true;
        found.push_back(v);
      }
    }
    std::sort(found.begin(), found.end());
    return found;
  };
  std::vector<int> node_devices;
  for (int d = 0; d < static_cast<int>(devices.size()); ++d) {
    if (devices[d].node >= 0 && devices[d].node < drawn_nodes) node_devices.push_back(d);
  }
  const std::vector<int> leaves = switches_next_to(node_devices);
  const std::vector<int> spines = switches_next_to(leaves);
  std::vector<std::vector<int>> rows;
  if (!spines.empty()) rows.push_back(spines);
  if (!leaves.empty()) rows.push_back(leaves);
  return rows;
}

std::string left_out_caption(const topo::Topology& machine, int drawn_nodes, int drawn_switches) {
  if (machine.nodes() <= drawn_nodes) return "";
  const auto switches = std::count_if(machine.devices().begin(), machine.devices().end(),
                                      [](const topo::Device& d) { return d.node < 0; });
  std::string caption = fmt::format("{} of {} nodes drawn ({} left out)", drawn_nodes,
                                    machine.nodes(), machine.nodes() - drawn_nodes);
  if (switches > drawn_switches) {
    caption += fmt::format(", {} of {} network switches ({} left out)", drawn_switches, switches,
                           switches - drawn_switches);
  }
  return caption;
}

double row_y(size_t row) { return kMargin + kBoxHeight / 2 + static_cast<double>(row) * kRowGap; }

struct Box {
  double left, top, right, bottom;
};

Box box_around(Point centre) {
  constexpr double kClearance = 2;
  return {centre.x - kBoxWidth / 2 - kClearance, centre.y - kBoxHeight / 2 - kClearance,
          centre.x + kBoxWidth / 2 + kClearance, centre.y + kBoxHeight / 2 + kClearance};
}

// Whether the segment from a to b crosses `box` (Liang-Barsky clipping).
bool crosses(Point a, Point b, const Box& box) {
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {a.x - box.left, box.right - a.x, a.y - box.top, box.bottom - a.y};
  double enter = 0, leave = 1;
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) {
      enter = std::max(enter, t);
    } else {
      leave = std::min(leave, t);
    }
  }
  return enter <= leave;
}

}  // namespace

TopologyLayout layout_topology(const topo::Topology& machine) {
  const auto& devices = machine.devices();
  const int drawn_nodes = std::min(machine.nodes(), kMaxNodesDrawn);
  std::vector<NodeDrawing> nodes;
  for (int n = 0; n < drawn_nodes; ++n) nodes.push_back(draw_node(machine, n));
  const std::vector<std::vector<int>> band = network_rows(machine, drawn_nodes);

  double nodes_width = 0;
  for (const NodeDrawing& node : nodes) {
    nodes_width += (nodes_width > 0 ? kLaneRoom : 0) + node.columns * kPitch;
  }
  double inner_width = nodes_width;
  for (const auto& row : band) {
    inner_width = std::max(inner_width, static_cast<double>(row.size()) * kPitch);
  }

  TopologyLayout out;
  out.centre.resize(devices.size());
  out.arc_side.assign(devices.size(), -1);
  out.lane_group.assign(devices.size(), 0);
  int drawn_switches = 0;
  for (size_t r = 0; r < band.size(); ++r) {
    const double left =
        kLaneRoom + (inner_width - static_cast<double>(band[r].size()) * kPitch) / 2;
    for (size_t i = 0; i < band[r].size(); ++i) {
      out.centre[band[r][i]] = Point{left + (static_cast<double>(i) + 0.5) * kPitch, row_y(r)};
      ++drawn_switches;
    }
  }
  double node_left = kLaneRoom + (inner_width - nodes_width) / 2;
  int most_rows = 0;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const NodeDrawing& node = nodes[n];
    out.lane_edge.push_back(node_left);
    for (const auto& [d, column] : node.column) {
      out.centre[d] =
          Point{node_left + (column + 0.5) * kPitch, row_y(band.size() + node.row.at(d))};
      out.arc_side[d] = node.arc_side.at(d);
      out.lane_group[d] = static_cast<int>(n);
    }
    node_left += node.columns * kPitch + kLaneRoom;
    most_rows = std::max(most_rows, node.rows);
  }
  out.width = kLaneRoom + inner_width + kMargin;
  out.height = row_y(band.size() + static_cast<size_t>(std::max(1, most_rows)) - 1) +
               kBoxHeight / 2 + kMargin / 2;
  out.left_out = left_out_caption(machine, drawn_nodes, drawn_switches);
  return out;
}

std::vector<LinkPath> route_links(const topo::Topology& machine, const TopologyLayout& layout) {
  std::vector<int> drawn;
  for (int d = 0; d < static_cast<int>(layout.centre.size()); ++d) {
    if (layout.centre[d]) drawn.push_back(d);
  }
  std::vector<int> detours(layout.lane_edge.size(), 0);
  std::vector<LinkPath> paths;
  for (int l = 0; l < static_cast<int>(machine.links().size()); ++l) {
    const topo::Link& link = machine.links()[l];
    if (!layout.centre[link.a] || !layout.centre[link.b]) continue;
    const Point a = *layout.centre[link.a], b = *layout.centre[link.b];
    const bool blocked = std::any_of(drawn.begin(), drawn.end(), [&](int d) {
      return d != link.a && d != link.b && crosses(a, b, box_around(*layout.centre[d]));
    });
    LinkPath path{l, {}, {}, 0};
    if (!blocked) {
      path.svg_path = fmt::format("M{:.1f} {:.1f} L{:.1f} {:.1f}", a.x, a.y, b.x, b.y);
      for (double t : {0.5, 0.35, 0.65, 0.25, 0.75})
        path.labels.push_back({a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)});
      path.bottom = std::max(a.y, b.y);
    } else if (a.y == b.y) {
      const double bow =
          layout.arc_side[link.a] * std::min(kArcBow * std::abs(b.x - a.x), kArcBowMax);
      const Point control{(a.x + b.x) / 2, a.y + bow};
      path.svg_path = fmt::format("M{:.1f} {:.1f} Q{:.1f} {:.1f} {:.1f} {:.1f}", a.x, a.y,
                                  control.x, control.y, b.x, b.y);
      path.labels.push_back({control.x, a.y + bow / 2});  // the curve's midpoint
      path.bottom = std::max(a.y, a.y + bow / 2);
    } else {
      // Along a lane left of the node. Each end joins the lane along its own row when nothing
      // stands in the way, else through the channel between its row and the next towards the
      // other end.
      const int group = machine.devices()[link.a].node >= 0 ? layout.lane_group[link.a]
                                                             : layout.lane_group[link.b];
      const int lane = detours[group]++;
      const double x = layout.lane_edge[group] - 14 - kLaneStep * lane;
      const double channel = (kRowGap / 2 - 3 * lane) * (b.y > a.y ? 1 : -1);
      auto join_y = [&](Point end, double towards_other) {
        const bool clear = std::none_of(drawn.begin(), drawn.end(), [&](int d) {
          return d != link.a && d != link.b &&
                 crosses(end, Point{x, end.y}, box_around(*layout.centre[d]));
        });
        return clear ? end.y : end.y + towards_other;
      };
      const double ya = join_y(a, channel), yb = join_y(b, -channel);
      std::vector<Point> corners{a};
      if (ya != a.y) corners.push_back({a.x, ya});
      corners.push_back({x, ya});
      corners.push_back({x, yb});
      if (yb != b.y) corners.push_back({b.x, yb});
      corners.push_back(b);
      for (const Point& c : corners) {
        path.svg_path +=
            fmt::format("{}{:.1f} {:.1f}", path.svg_path.empty() ? "M" : " L", c.x, c.y);
      }
      path.labels.push_back({x, (ya + yb) / 2});
      path.bottom = std::max({a.y, b.y, ya, yb});
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

}  // namespace gpuscale::report
