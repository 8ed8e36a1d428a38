#include "sim/compute/measurement.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "topologies/core/config_reader.hpp"
#include "topologies/core/yaml_scalar.hpp"

namespace gpuscale::compute {
namespace {

MeasuredGpu read_gpu_details(const ConfigNode& node) {
  MapReader r(node, "gpu_details",
              {"name", "compute_capability", "sm_count", "sm_clock", "memory_clock", "memory"});
  MeasuredGpu g;
  g.name = r.string("name", "NVIDIA H200");
  g.compute_capability = r.string("compute_capability", "\"9.0\"");
  g.sm_count = static_cast<int>(
      read_integer(r.require("sm_count", "132"), "sm_count of gpu_details", 1, 100000));
  g.sm_clock = read_frequency(r.require("sm_clock", "1980 MHz"), "sm_clock of gpu_details");
  g.memory_clock =
      read_frequency(r.require("memory_clock", "3201 MHz"), "memory_clock of gpu_details");
  g.memory = read_bytes(r.require("memory", "143771 MiB"), "memory of gpu_details");
  return g;
}

PeerLink read_peer(const ConfigNode& node) {
  MapReader r(node, "a peer of microbenchmarks",
              {"from", "to", "peer_access", "bandwidth", "latency"});
  PeerLink link;
  link.from = static_cast<int>(read_integer(r.require("from", "0"), "'from' of a peer", 0, 1023));
  link.to = static_cast<int>(read_integer(r.require("to", "1"), "'to' of a peer", 0, 1023));
  if (link.from == link.to) {
    throw ConfigError(node.origin(), fmt::format("a peer goes from GPU {} to itself (a pair is "
                                                 "two different GPUs)",
                                                 link.from));
  }
  link.peer_access = read_bool(r.require("peer_access", "true"), "peer_access of a peer");
  link.bandwidth = read_bandwidth(r.require("bandwidth", "150 GB/s"), "bandwidth of a peer");
  link.latency = read_seconds(r.require("latency", "8 us"), "latency of a peer");
  return link;
}

HostCallTime read_host_call_time(const ConfigNode& node, const std::string& what) {
  MapReader r(node, what, {"median", "spread"});
  return {read_seconds(r.require("median", "3.8 us"), "median of " + what),
          read_seconds(r.require("spread", "0.1 us"), "spread of " + what)};
}

CopyIssue read_copy_issue(const ConfigNode& node) {
  MapReader r(node, "peer_copy_issue", {"copy", "issue", "round_trip"});
  CopyIssue c;
  c.peer = read_one_of(r.require("copy", "peer"), "copy of peer_copy_issue",
                       {"peer", "device_to_device"}) == "peer";
  c.issue = read_host_call_time(r.require("issue", "{median: 4 us, spread: 0.1 us}"),
                                "issue of peer_copy_issue");
  c.round_trip = read_host_call_time(r.require("round_trip", "{median: 12 us, spread: 0.2 us}"),
                                     "round_trip of peer_copy_issue");
  return c;
}

Microbenchmarks read_microbenchmarks(const ConfigNode& node) {
  MapReader r(node, "microbenchmarks",
              {"launch_overhead", "device_copy_bandwidth", "host_to_device", "device_to_host",
               "launch", "launch_sync", "event_record", "peer_copy_issue", "host_sync_d2h",
               "peers"});
  Microbenchmarks m;
  m.launch_overhead = read_seconds(r.require("launch_overhead", "2.1 us"), "launch_overhead");
  m.device_copy_bandwidth = read_bandwidth(r.require("device_copy_bandwidth", "4300 GB/s"),
                                           "device_copy_bandwidth");
  m.host_to_device = read_bandwidth(r.require("host_to_device", "55 GB/s"), "host_to_device");
  m.device_to_host = read_bandwidth(r.require("device_to_host", "55 GB/s"), "device_to_host");
  const auto host_call_time = [&](const std::string& key) -> std::optional<HostCallTime> {
    const ConfigNode* value = r.find(key);
    if (value == nullptr) return std::nullopt;
    return read_host_call_time(*value, key);
  };
  m.launch = host_call_time("launch");
  m.launch_sync = host_call_time("launch_sync");
  m.event_record = host_call_time("event_record");
  if (const ConfigNode* c = r.find("peer_copy_issue")) m.peer_copy_issue = read_copy_issue(*c);
  m.host_sync_d2h = host_call_time("host_sync_d2h");
  if (const ConfigNode* peers = r.find("peers")) {
    if (!peers->is_sequence()) {
      throw ConfigError(peers->origin(), "peers must be a list (e.g. '[]', or '- {from: 0, to: "
                                         "1, peer_access: true, bandwidth: 150 GB/s, latency: 8 "
                                         "us}')");
    }
    for (const ConfigNode& item : peers->items()) m.peers.push_back(read_peer(item));
  }
  return m;
}

// YYYY-MM-DD: the one form that sorts and that no reader misreads.
std::string read_date(const ConfigNode& node) {
  const std::string date = read_string(node, "date");
  const bool iso = date.size() == 10 && date[4] == '-' && date[7] == '-' &&
                   date.find_first_not_of("0123456789-") == std::string::npos;
  if (!iso) {
    throw ConfigError(node.origin(),
                      fmt::format("date '{}' is not a day in ISO 8601 form (write e.g. "
                                  "'2026-11-22')",
                                  date));
  }
  return date;
}

std::string optional_line(std::string_view key, const std::string& value) {
  return value.empty() ? "" : fmt::format("{}: {}\n", key, yaml_scalar(value));
}

std::string host_call_time_yaml(const HostCallTime& t) {
  return fmt::format("{{median: {}, spread: {}}}", format_microseconds(t.median),
                     format_microseconds(t.spread));
}

std::string host_call_time_line(std::string_view key, const std::optional<HostCallTime>& t) {
  return t ? fmt::format("  {}: {}\n", key, host_call_time_yaml(*t)) : "";
}

}  // namespace

std::optional<Seconds> Microbenchmarks::sync_round_trip() const {
  if (!launch || !launch_sync) return std::nullopt;
  // Where a sync costs next to nothing, noise can make the difference negative.
  return Seconds{std::max(0.0, launch_sync->median.value - launch->median.value)};
}

std::vector<std::string> measurement_header_keys() {
  return {"gpu",  "gpu_details", "driver", "cuda",   "cudnn",          "cublas",
          "framework", "date",   "method", "source", "microbenchmarks"};
}

MeasurementHeader read_measurement_header(const MapReader& top) {
  MeasurementHeader h;
  const ConfigNode& gpu = top.require("gpu", "H200-SXM");
  h.gpu = read_string(gpu, fmt::format("'gpu' of {}", top.what()));
  h.gpu_origin = gpu.origin();
  if (const ConfigNode* details = top.find("gpu_details")) {
    h.gpu_details = read_gpu_details(*details);
  }
  h.driver = top.string("driver", "\"580.159.04\"");
  h.cuda = top.string("cuda", "\"13.0\"");
  h.cudnn = top.string("cudnn", "\"9.13.0\"");
  h.cublas = top.optional_string("cublas").value_or("");
  h.framework = top.string("framework", "MXNet 1.2.0 (NGC 18.04)");
  if (const ConfigNode* date = top.find("date")) h.date = read_date(*date);
  h.method = top.optional_string("method").value_or("");
  h.source = top.optional_string("source").value_or("");
  if (const ConfigNode* m = top.find("microbenchmarks")) h.microbenchmarks = read_microbenchmarks(*m);
  return h;
}

std::string measurement_header_to_yaml(const MeasurementHeader& h) {
  std::string out = fmt::format("gpu: {}\n", yaml_scalar(h.gpu));
  if (h.gpu_details) {
    const MeasuredGpu& d = *h.gpu_details;
    out += fmt::format("gpu_details: {{name: {}, compute_capability: {}, sm_count: {}, "
                       "sm_clock: {}, memory_clock: {}, memory: {}}}\n",
                       yaml_scalar(d.name), yaml_scalar(d.compute_capability), d.sm_count,
                       format_megahertz(d.sm_clock), format_megahertz(d.memory_clock),
                       format_mebibytes(d.memory));
  }
  out += fmt::format("driver: {}\ncuda: {}\ncudnn: {}\n", yaml_scalar(h.driver),
                     yaml_scalar(h.cuda), yaml_scalar(h.cudnn));
  out += optional_line("cublas", h.cublas);
  out += fmt::format("framework: {}\n", yaml_scalar(h.framework));
  out += optional_line("date", h.date);
  out += optional_line("method", h.method);
  out += optional_line("source", h.source);
  if (h.microbenchmarks) {
    const Microbenchmarks& m = *h.microbenchmarks;
    out += fmt::format("microbenchmarks:\n  launch_overhead: {}\n  device_copy_bandwidth: {}\n"
                       "  host_to_device: {}\n  device_to_host: {}\n",
                       format_microseconds(m.launch_overhead),
                       format_gigabytes_per_second(m.device_copy_bandwidth),
                       format_gigabytes_per_second(m.host_to_device),
                       format_gigabytes_per_second(m.device_to_host));
    out += host_call_time_line("launch", m.launch);
    out += host_call_time_line("launch_sync", m.launch_sync);
    out += host_call_time_line("event_record", m.event_record);
    if (const auto& c = m.peer_copy_issue) {
      out += fmt::format("  peer_copy_issue: {{copy: {}, issue: {},\n"
                         "                    round_trip: {}}}\n",
                         c->peer ? "peer" : "device_to_device", host_call_time_yaml(c->issue),
                         host_call_time_yaml(c->round_trip));
    }
    out += host_call_time_line("host_sync_d2h", m.host_sync_d2h);
    out += m.peers.empty() ? "  peers: []\n" : "  peers:\n";
    for (const PeerLink& p : m.peers) {
      out += fmt::format("    - {{from: {}, to: {}, peer_access: {}, bandwidth: {}, latency: {}}}\n",
                         p.from, p.to, p.peer_access, format_gigabytes_per_second(p.bandwidth),
                         format_microseconds(p.latency));
    }
  }
  return out;
}

}  // namespace gpuscale::compute
