#include "tools/gpuscale/topo_command.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "tools/gpuscale/route_command.hpp"
#include "topologies/src/rings.hpp"
#include "topologies/src/topology_loader.hpp"
#include "topologies/src/topology_report.hpp"
#include "validation/report/topology_svg.hpp"

namespace gpuscale::cli {
namespace {

struct ShowOptions {
  std::string machine;
  std::string format = "table";
  std::string routing;
  std::vector<std::string> overrides;
};

void list_topologies() {
  std::string out;
  for (const auto& name : topo::shipped_topologies().names()) {
    const topo::TopologyConfig config = topo::load_topology_config(name);
    const topo::Topology t = topo::Topology::build(config);
    out += fmt::format("{:<14} {:>4} GPUs  {}\n", name, t.gpus().size(), t.description());
  }
  std::cout << out;
}

void show_topology(const ShowOptions& o) {
  const topo::Topology t = topo::Topology::build(topo::load_topology_config(o.machine, o.overrides));
  const topo::Router router(t, topo::routing_mode_for(t, o.routing));
  router.check_all_pairs();
  const topo::RingSet rings = topo::find_rings(t);
  const topo::TopologyView view{t, router, rings};
  // Rendered whole before printing: an error never leaves half an output behind.
  std::string out;
  if (o.format == "json") {
    out = topo::topology_json(view).dump(2) + "\n";
  } else if (o.format == "dot") {
    out = topo::topology_dot(view);
  } else if (o.format == "svg") {
    out = report::render_topology_svg(t, {}, t.name() + ": " + t.description());
  } else {
    out = topo::topology_table(view);
  }
  std::cout << out;
}

}  // namespace

void add_topo_commands(CLI::App& app) {
  auto* topo_cmd = app.add_subcommand("topo", "The machines gpuscale models");
  topo_cmd->require_subcommand(1);

  topo_cmd->add_subcommand("list", "List the shipped machines")->callback(list_topologies);

  auto options = std::make_shared<ShowOptions>();
  auto* show = topo_cmd->add_subcommand("show", "Show a machine: devices, links, routes, rings");
  show->add_option("machine", options->machine, "A shipped machine name or a .yaml file")
      ->required();
  show->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "dot", "svg"}))
      ->capture_default_str();
  show->add_option("--routing", options->routing,
                   "Route GPU pairs without NVLink this way (default: the file's routing)")
      ->check(CLI::IsMember(topo::routing_mode_names()));
  show->add_option("--set", options->overrides,
                   "Override a value of the file: KEY.PATH=VALUE (e.g. cluster.nodes=16)")
      ->allow_extra_args(false);
  show->callback([options] { show_topology(*options); });

  add_route_command(*topo_cmd);
}

}  // namespace gpuscale::cli
