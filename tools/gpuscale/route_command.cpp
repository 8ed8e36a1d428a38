#include "tools/gpuscale/route_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "sim/experiment/copy_job.hpp"
#include "tools/gpuscale/size_option.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::cli {
namespace {

struct RouteOptions {
  sim::CopyJob job;
  std::string bytes = "100MiB";
  std::string format = "table";
};

double gbps(BytesPerSecond bw) { return bw.value / 1e9; }
double micros(Seconds t) { return t.value * 1e6; }

// What the route kind means for the copy, in a student's words: a line, maybe a second one.
std::string how_it_goes(const sim::CopyJobResult& r) {
  const auto& devices = r.machine.devices();
  const std::string& via = devices[r.route.legs.front().dst()].name;
  switch (r.route.kind) {
    case topo::RouteKind::NvLink: return "one NVLink hop";
    case topo::RouteKind::NvSwitch:
      return "one cut-through flow over NVLinks through the NVSwitch fabric";
    case topo::RouteKind::TwoHopGpu:
      return fmt::format("store-and-forward in 2 legs through {}\n  (the copy lands in {}'s "
                         "memory, then {} sends it on)", via, via, via);
    case topo::RouteKind::HostStaged:
      return fmt::format("store-and-forward in 2 legs through {}'s host memory\n  (copy to the "
                         "host, then fetch from it: cudaMemcpy without peer access)", via);
    case topo::RouteKind::P2p:
      return "one cut-through peer copy over PCIe and the CPUs\n  (one flow holds every link "
             "at once)";
    case topo::RouteKind::Network:
      return "one cut-through flow through the NICs and the network (GPUDirect RDMA)";
  }
  return "";
}

// The devices a leg passes through: all but its two ends.
std::vector<int> crossed_devices(const topo::Leg& leg) {
  return {leg.devices.begin() + 1, leg.devices.end() - 1};
}

nlohmann::ordered_json route_json(const sim::CopyJobResult& r, double bytes) {
  const topo::Topology& t = r.machine;
  const auto& devices = t.devices();
  nlohmann::ordered_json legs = nlohmann::ordered_json::array();
  for (const topo::Leg& leg : r.route.legs) {
    nlohmann::ordered_json path = nlohmann::ordered_json::array();
    for (int d : leg.devices) path.push_back(devices[d].name);
    nlohmann::ordered_json hops = nlohmann::ordered_json::array();
    for (size_t h = 0; h < leg.hops.size(); ++h) {
      const topo::Link& l = t.links()[leg.hops[h].link];
      hops.push_back({{"from", devices[leg.devices[h]].name},
                      {"to", devices[leg.devices[h + 1]].name},
                      {"link", l.id},
                      {"kind", topo::to_string(l.kind)},
                      {"lanes", l.lanes},
                      {"bandwidth_GBps", gbps(l.bandwidth)},
                      {"effective_GBps", gbps(l.effective_bandwidth())},
                      {"latency_us", micros(l.latency)}});
    }
    nlohmann::ordered_json crossed = nlohmann::ordered_json::array();
    for (int d : crossed_devices(leg)) {
      crossed.push_back({{"device", devices[d].name},
                         {"kind", topo::to_string(devices[d].kind)},
                         {"latency_us", micros(devices[d].latency)}});
    }
    legs.push_back({{"path", path},
                    {"hops", hops},
                    {"crossed", crossed},
                    {"latency_us", micros(leg.latency(t))},
                    {"bottleneck_GBps", gbps(leg.bandwidth(t))},
                    {"closed_form_s", leg.copy_time(t, Bytes{bytes}).value}});
  }
  const bool staged = r.route.legs.size() > 1;
  return {{"machine", t.name()},
          {"routing", topo::to_string(r.routing)},
          {"src", devices[r.src].name},
          {"dst", devices[r.dst].name},
          {"kind", topo::to_string(r.route.kind)},
          {"store_and_forward", staged},
          {"via", staged ? nlohmann::ordered_json(devices[r.route.legs.front().dst()].name)
                         : nlohmann::ordered_json(nullptr)},
          {"bytes", bytes},
          {"legs", legs},
          {"closed_form_s", r.route.copy_time(t, Bytes{bytes}).value},
          {"simulated_s", r.simulated_s}};
}

std::string route_table(const sim::CopyJobResult& r, double bytes, const std::string& size) {
  const topo::Topology& t = r.machine;
  const auto& devices = t.devices();
  std::string out = fmt::format("{}: a copy from {} to {} under routing {}\n", t.name(),
                                devices[r.src].name, devices[r.dst].name,
                                topo::to_string(r.routing));
  out += fmt::format("route {}: {}\n", topo::to_string(r.route.kind), how_it_goes(r));
  out += "\nEach hop: link kind, lanes, effective bandwidth per direction, latency\n";
  for (size_t i = 0; i < r.route.legs.size(); ++i) {
    const topo::Leg& leg = r.route.legs[i];
    std::vector<std::string> path;
    for (int d : leg.devices) path.push_back(devices[d].name);
    out += fmt::format("\nleg {}: {}\n", i + 1, fmt::join(path, " > "));
    for (size_t h = 0; h < leg.hops.size(); ++h) {
      const topo::Link& l = t.links()[leg.hops[h].link];
      if (h > 0 && devices[leg.devices[h]].latency.value > 0) {
        const topo::Device& crossed = devices[leg.devices[h]];
        out += fmt::format("  {:<18} {:<32}  {:>9}\n", crossed.name,
                           fmt::format("(crossing the {})", topo::to_string(crossed.kind)),
                           format_seconds(crossed.latency));
      }
      out += fmt::format("  {:<18} {:<10} x{:<3}  eff {:>11}  {:>9}\n",
                         fmt::format("{} -> {}", devices[leg.devices[h]].name,
                                     devices[leg.devices[h + 1]].name),
                         topo::to_string(l.kind), l.lanes,
                         format_bandwidth(l.effective_bandwidth()), format_seconds(l.latency));
    }
    out += fmt::format("  latency {}, bottleneck {}\n", format_seconds(leg.latency(t)),
                       format_bandwidth(leg.bandwidth(t)));
  }

  const double closed_s = r.route.copy_time(t, Bytes{bytes}).value;
  out += fmt::format("\nA copy of {} ({:.0f} B), each leg latency + bytes / bottleneck:\n", size,
                     bytes);
  for (size_t i = 0; i < r.route.legs.size(); ++i) {
    const topo::Leg& leg = r.route.legs[i];
    out += fmt::format("  leg {}: {} + {:.0f} B / {} = {:.2f} us\n", i + 1,
                       format_seconds(leg.latency(t)), bytes, format_bandwidth(leg.bandwidth(t)),
                       micros(leg.copy_time(t, Bytes{bytes})));
  }
  out += fmt::format("  closed form (sum over legs)  {:>12.2f} us\n", closed_s * 1e6);
  out += fmt::format("  simulated on SimGrid         {:>12.2f} us  ({:+.2f}% from the closed "
                     "form)\n",
                     r.simulated_s * 1e6, 100.0 * (r.simulated_s / closed_s - 1.0));
  return out;
}

void show_route(const RouteOptions& o) {
  sim::CopyJob job = o.job;
  job.bytes = parse_size("--bytes", o.bytes);  // before the machine: a cheap check first
  const sim::CopyJobResult result = sim::run_copy_job(job);
  // Rendered whole before printing: an error never leaves half an output behind.
  const std::string out = o.format == "json" ? route_json(result, job.bytes).dump(2) + "\n"
                                             : route_table(result, job.bytes, o.bytes);
  std::cout << out;
}

}  // namespace

void add_route_command(CLI::App& topo) {
  auto o = std::make_shared<RouteOptions>();
  auto* cmd = topo.add_subcommand("route", "The route of a copy between two GPUs, hop by hop, "
                                           "and its cost (simulated and closed form)");
  cmd->add_option("machine", o->job.topology, "A shipped machine name or a .yaml file")
      ->required();
  cmd->add_option("src", o->job.src, "The GPU the copy leaves (e.g. gpu0)")->required();
  cmd->add_option("dst", o->job.dst, "The GPU the copy reaches (e.g. gpu5)")->required();
  cmd->add_option("--bytes", o->bytes, "The size of the copy: 100MiB, 1 GB, 1e8 (bytes)")
      ->capture_default_str();
  cmd->add_option("--routing", o->job.routing,
                  "Route GPU pairs without NVLink this way (default: the machine's routing)")
      ->check(CLI::IsMember(topo::routing_mode_names()));
  cmd->add_option("--set", o->job.topology_overrides,
                  "Override a value of the machine: KEY.PATH=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->callback([o] { show_route(*o); });
}

}  // namespace gpuscale::cli
