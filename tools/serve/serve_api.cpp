#include "tools/serve/serve_api.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/engine/isolated.hpp"
#include "sim/exchange/exchange_choice.hpp"
#include "sim/experiment/experiment.hpp"
#include "sim/experiment/experiment_file.hpp"
#include "sim/experiment/machine_setup.hpp"
#include "sim/experiment/result_writer.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/shipped_files.hpp"
#include "topologies/src/topology.hpp"
#include "topologies/src/topology_document.hpp"
#include "topologies/src/topology_loader.hpp"
#include "validation/report/timeline_svg.hpp"
#include "validation/report/topology_svg.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/workload_document.hpp"

namespace gpuscale::serve {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// The page opens with the default study's ResNet-50 (README, "Quick start").
constexpr const char* kDefaultStudy = "tools/experiments/dgx1-study.yaml";
constexpr const char* kDefaultWorkload = "resnet-50";

// A request's key, as its errors name it.
Origin at(const std::string& key) { return Origin{"request." + key, 0}; }

// One configuration over a few GPU counts, as a run request names it.
struct RunRequest {
  std::string machine;
  std::vector<std::string> set;
  // Links added, changed or removed, as a `base:` file's `links:` entries, one JSON object each.
  std::vector<std::string> links;
  std::string variability;  // a machine file's `variability:` section, as JSON; empty: the machine's
  int samples = 0;          // sampled iterations (docs/variability.md); 0: deterministic
  std::uint64_t seed = 1;
  std::string workload = kDefaultWorkload;
  std::string framework;
  std::string comm;
  std::string precision;
  std::vector<std::string> without;  // mechanisms left out (sim::mechanism_names)
  std::vector<int> gpus;
  int batch = 0;
  long images = 0;
};

const std::vector<std::string>& run_request_keys() {
  static const std::vector<std::string> keys = {
      "machine", "set", "links", "variability", "samples", "seed", "workload", "framework", "comm",
      "precision", "without", "gpus", "batch", "images"};
  return keys;
}

std::string string_at(const Json& request, const std::string& key) {
  const Json& value = request.at(key);
  if (!value.is_string()) throw ConfigError(at(key), "must be a string");
  return value.get<std::string>();
}

long integer_at(const Json& value, const std::string& key, long low, long high) {
  if (!value.is_number_integer() || value.get<long>() < low || value.get<long>() > high) {
    throw ConfigError(at(key), fmt::format("{} is not a whole number from {} to {}", value.dump(),
                                           low, high));
  }
  return value.get<long>();
}

// A list of strings.
std::vector<std::string> strings_at(const Json& request, const std::string& key) {
  const Json& value = request.at(key);
  std::vector<std::string> out;
  if (!value.is_array()) throw ConfigError(at(key), "must be a list of strings");
  for (const Json& item : value) {
    if (!item.is_string()) throw ConfigError(at(key), "must be a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

// `name` if `folder` ships it, never a path: the server reads no file outside its data tree.
// `what` names the folder's files in the error.
void check_shipped(const std::string& name, const std::string& key, const ShippedFolder& folder,
                   const std::string& what) {
  const std::vector<std::string> names = folder.names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw ConfigError(at(key), fmt::format("'{}' is no shipped {} (shipped: {})", name, what,
                                           fmt::join(names, ", ")));
  }
}

std::string shipped_name(const Json& request, const std::string& key, const ShippedFolder& folder) {
  std::string name = string_at(request, key);
  check_shipped(name, key, folder, folder.what());
  return name;
}

Json parse_object(const std::string& body, const Limits& limits) {
  if (body.size() > limits.max_request_bytes) {
    throw ConfigError(Origin{"request", 0},
                      fmt::format("{} bytes, more than the {} a request may hold", body.size(),
                                  limits.max_request_bytes));
  }
  Json request;
  try {
    request = Json::parse(body);
  } catch (const Json::parse_error& e) {
    throw ConfigError(Origin{"request", 0}, fmt::format("not JSON ({})", e.what()));
  }
  if (!request.is_object()) throw ConfigError(Origin{"request", 0}, "must be a JSON object");
  return request;
}

RunRequest parse_run_request(const std::string& body, const Limits& limits) {
  const Json request = parse_object(body, limits);
  for (const auto& [key, value] : request.items()) {
    const auto& keys = run_request_keys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw ConfigError(at(key), fmt::format("unknown key (known: {})", fmt::join(keys, ", ")));
    }
  }
  for (const char* key : {"machine", "comm", "gpus", "batch"}) {
    if (!request.contains(key)) throw ConfigError(at(key), "missing: every run names it");
  }
  RunRequest r;
  r.machine = shipped_name(request, "machine", topo::shipped_topologies());
  if (request.contains("set")) r.set = strings_at(request, "set");
  if (request.contains("links")) {
    const Json& links = request["links"];
    if (!links.is_array()) throw ConfigError(at("links"), "must be a list of links ({a, b, ...})");
    for (const Json& link : links) {
      if (!link.is_object()) {
        throw ConfigError(at("links"), fmt::format("{} is no link: each is an object such as "
                                                   "{{\"a\": \"gpu0\", \"b\": \"gpu5\", "
                                                   "\"kind\": \"nvlink\", \"lanes\": 1}}",
                                                   link.dump()));
      }
      r.links.push_back(link.dump());
    }
  }
  if (request.contains("variability")) {
    if (!request["variability"].is_object()) {
      throw ConfigError(at("variability"), "must be an object, as a machine file's variability: "
                                           "section ({\"compute\": {\"distribution\": "
                                           "\"normal\", \"cv\": 0.05, \"source\": \"...\"}})");
    }
    r.variability = request["variability"].dump();
  }
  if (request.contains("samples"))
    r.samples = static_cast<int>(integer_at(request["samples"], "samples", 0, limits.max_samples));
  if (request.contains("seed")) {
    if (r.samples == 0) throw ConfigError(at("seed"), "only matters with samples: add them or drop it");
    r.seed = static_cast<std::uint64_t>(integer_at(request["seed"], "seed", 0, 1L << 53));
  }
  if (request.contains("without")) {
    r.without = strings_at(request, "without");
    const auto& known = sim::mechanism_names();
    for (const std::string& name : r.without) {
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        throw ConfigError(at("without"), fmt::format("'{}' is no mechanism (known: {})", name,
                                                     fmt::join(known, ", ")));
      }
    }
  }
  if (request.contains("workload"))
    r.workload = shipped_name(request, "workload", wl::shipped_workloads());
  if (request.contains("framework") && !string_at(request, "framework").empty())
    r.framework = shipped_name(request, "framework", wl::shipped_frameworks());
  r.comm = string_at(request, "comm");
  if (request.contains("precision")) r.precision = string_at(request, "precision");
  const Json& gpus = request["gpus"];
  if (!gpus.is_array() || gpus.empty() ||
      gpus.size() > static_cast<std::size_t>(limits.max_gpu_counts)) {
    throw ConfigError(at("gpus"), fmt::format("must be a list of 1 to {} GPU counts",
                                              limits.max_gpu_counts));
  }
  for (const Json& count : gpus)
    r.gpus.push_back(static_cast<int>(integer_at(count, "gpus", 1, limits.max_gpus)));
  r.batch = static_cast<int>(integer_at(request["batch"], "batch", 1, 1 << 20));
  if (request.contains("images"))
    r.images = integer_at(request["images"], "images", 0, 1L << 40);
  return r;
}

// The shipped machine with the request's changes derived over it, as a `base:` file's
// (docs/topology-schema.md): its `links` entries (one with the endpoints of a link changes it,
// `remove: true` removes it, any other is a new link) and its `variability` section. Errors
// name `request.links:N`, the Nth entry, or `request.variability`.
std::shared_ptr<const ConfigNode> changed_machine(const RunRequest& r) {
  ConfigNode own = ConfigNode::map(at("machine"));
  own.set("base", ConfigNode::scalar(r.machine, at("machine")));
  if (!r.links.empty()) {
    std::string entries;
    for (const std::string& link : r.links) entries += "- " + link + "\n";  // JSON is YAML
    own.set("links", ConfigNode::load_string(entries, "request.links"));
  }
  if (!r.variability.empty())
    own.set("variability", ConfigNode::load_string(r.variability, "request.variability"));
  return std::make_shared<const ConfigNode>(topo::resolve_base(std::move(own), ""));
}

sim::Experiment experiment_of(const RunRequest& r) {
  sim::Experiment e;
  e.topology = r.machine;
  if (!r.links.empty() || !r.variability.empty()) e.topology_document = changed_machine(r);
  for (const std::string& assignment : r.set) sim::add_override(e, assignment, at("set"));
  e.workloads = {r.workload};
  e.framework = r.framework;
  e.comms = {r.comm};
  e.comms_written_at = {at("comm")};
  e.precision = r.precision;
  if (!r.precision.empty()) e.precision_written_at = at("precision");
  e.without = r.without;
  e.gpus = r.gpus;
  e.gpus_written_at.assign(r.gpus.size(), at("gpus"));
  e.batches = {r.batch};
  e.images = r.images;
  e.samples = r.samples;
  e.seed = r.seed;
  e.record_timeline = true;
  return e;
}

// The run itself, in the child: the rows as `gpuscale run --format json` prints them, and the
// pictures of the configuration with the most GPUs.
OrderedJson simulate(const RunRequest& r) {
  const sim::Experiment e = experiment_of(r);
  const std::vector<sim::ResultRow> rows = sim::run_experiment(e);
  OrderedJson out = sim::results_json(sim::output_rows(rows, e), e);
  const auto most = std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.gpus < b.gpus;
  });
  if (most != rows.end()) {
    sim::Timeline timeline = most->timeline;
    timeline.title = fmt::format("{} {} {} GPUs batch {}", most->workload, most->comm,
                                 most->gpus, most->batch);
    out["timeline_svg"] = report::timeline_svg({timeline}, report::TimeWindow{});
    const topo::Topology machine =
        sim::machine_for(e.topology, e.topology_overrides, most->gpus, e.topology_document);
    out["machine_svg"] = report::render_topology_svg(
        machine, most->link_uses,
        fmt::format("{}: link utilisation, {} with {} on {} GPUs, batch {}", machine.name(),
                    most->workload, most->comm, most->gpus, most->batch));
  }
  return out;
}

// `work` in a child process (sim::start_isolated), ended with its own children past `limit_s`.
std::string run_with_limit(const std::function<std::string()>& work, double limit_s) {
  const sim::IsolatedChild child = sim::start_isolated([&work] {
    ::setpgid(0, 0);  // its configurations' processes too, for the kill below
    return work();
  });
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  std::string written;
  char buffer[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(-child.pid, SIGKILL);
      ::kill(child.pid, SIGKILL);
      ::close(child.fd);
      ::waitpid(child.pid, nullptr, 0);
      throw RunTooLong(fmt::format("the run took more than {:g} s, the limit a request has: "
                                   "ask for fewer or smaller configurations",
                                   limit_s));
    }
    pollfd ready{child.fd, POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(left.count()));
    if (polled < 0 && errno != EINTR) break;
    if (polled <= 0) continue;
    const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
    if (n > 0) {
      written.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  return sim::finish_isolated(child, written);
}

}  // namespace

OrderedJson catalog(const Limits& limits) {
  const sim::Experiment study = sim::load_experiment_file(data_root() + "/" + kDefaultStudy);
  OrderedJson machines = OrderedJson::array();
  for (const std::string& name : topo::shipped_topologies().names()) {
    machines.push_back({{"name", name},
                        {"description", topo::load_topology_config(name).description}});
  }
  OrderedJson out;
  out["machines"] = machines;
  out["workloads"] = wl::shipped_workloads().names();
  out["frameworks"] = wl::shipped_frameworks().names();
  out["comms"] = sim::comm_alias_names();
  out["precisions"] = wl::precision_recipe_names();
  out["mechanisms"] = sim::mechanism_names();
  out["defaults"] = {{"machine", study.topology},
                     {"workload", kDefaultWorkload},
                     {"framework", study.framework},
                     {"comm", study.comms.front()},
                     {"precision", ""},
                     {"without", nlohmann::json::array()},
                     {"gpus", study.gpus},
                     {"batch", study.batches.front()},
                     {"images", study.images}};
  out["limits"] = {{"max_gpus", limits.max_gpus},
                   {"max_gpu_counts", limits.max_gpu_counts},
                   {"max_request_bytes", limits.max_request_bytes},
                   {"max_run_seconds", limits.max_run_seconds},
                   {"max_samples", limits.max_samples},
                   {"concurrent_runs", limits.concurrent_runs}};
  return out;
}

OrderedJson machine(const std::string& name) {
  check_shipped(name, "name", topo::shipped_topologies(), "machine");
  const topo::TopologyConfig config = topo::load_topology_config(name);
  const topo::Topology built = topo::Topology::build(config);
  OrderedJson kinds = OrderedJson::object();
  for (const auto& [kind, k] : config.link_kinds) {
    kinds[topo::to_string(kind)] = {{"lane_bandwidth_GBps", k.lane_bandwidth.value / 1e9},
                                    {"latency_us", k.latency.value * 1e6},
                                    {"efficiency", k.efficiency}};
  }
  // Each link of the file (of a cluster's node), as `--set links.N.FIELD` names it.
  OrderedJson links = OrderedJson::array();
  for (std::size_t i = 0; i < config.links.size(); ++i) {
    const topo::LinkConfig& l = config.links[i];
    links.push_back({{"index", i},
                     {"a", l.a},
                     {"b", l.b},
                     {"kind", topo::to_string(l.kind)},
                     {"lanes", l.lanes},
                     {"lane_bandwidth_GBps", l.lane_bandwidth.value / 1e9},
                     {"latency_us", l.latency.value * 1e6}});
  }
  // Each device's name and kind: what a new link may join.
  OrderedJson devices = OrderedJson::array();
  for (const topo::DeviceConfig& d : config.devices)
    devices.push_back({{"name", d.name}, {"kind", topo::to_string(d.kind)}});
  return {{"name", name},
          {"description", config.description},
          {"gpus", built.gpus().size()},
          {"devices", devices},
          {"link_kinds", kinds},
          {"links", links},
          {"svg", report::render_topology_svg(built, {}, name + ": " + config.description)}};
}

OrderedJson run(const std::string& body, const Limits& limits) {
  const RunRequest request = parse_run_request(body, limits);
  return OrderedJson::parse(
      run_with_limit([&request] { return simulate(request).dump(); }, limits.max_run_seconds));
}

}  // namespace gpuscale::serve
