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
#include "sim/parallel/train_job.hpp"
#include "sim/parallel/train_output.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/shipped_files.hpp"
#include "topologies/src/topology.hpp"
#include "topologies/src/topology_document.hpp"
#include "topologies/src/topology_loader.hpp"
#include "tools/serve/request_reader.hpp"
#include "validation/report/timeline_svg.hpp"
#include "validation/report/topology_svg.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/transformer_layers.hpp"
#include "workloads/src/workload_document.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::serve {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// The page opens with the default study's ResNet-50 (README, "Quick start").
constexpr const char* kDefaultStudy = "tools/experiments/dgx1-study.yaml";
constexpr const char* kDefaultWorkload = "resnet-50";
// Its layouts open with `gpuscale train`'s defaults: GPT-3 175B on 128 DGX H200s
// (docs/parallelism.md, "Worked example"), at the batch of Narayanan et al. SC'21, Table 1.
constexpr int kTrainGpus = 1024;
constexpr int kGlobalBatch = 1536;

// One configuration over a few GPU counts, as a run request names it.
struct RunRequest {
  MachineRequest machine;
  int samples = 0;  // sampled iterations (docs/variability.md); 0: deterministic
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

RunRequest parse_run_request(const std::string& body, const Limits& limits) {
  std::vector<std::string> keys = machine_keys(/*with_variability=*/true);
  keys.insert(keys.end(), {"samples", "seed", "workload", "framework", "comm", "precision",
                           "without", "gpus", "batch", "images"});
  const Json request = read_request(body, limits.max_request_bytes, keys,
                                    {"machine", "comm", "gpus", "batch"}, "every run");
  RunRequest r;
  r.machine = read_machine(request);
  if (request.contains("samples"))
    r.samples = static_cast<int>(integer_at(request, "samples", 0, limits.max_samples));
  if (request.contains("seed")) {
    if (r.samples == 0) {
      throw ConfigError(request_key("seed"), "only matters with samples: add them or drop it");
    }
    r.seed = static_cast<std::uint64_t>(integer_at(request, "seed", 0, 1L << 53));
  }
  if (request.contains("without")) {
    r.without = strings_at(request, "without");
    const auto& known = sim::mechanism_names();
    for (const std::string& name : r.without) {
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        throw ConfigError(request_key("without"), fmt::format("'{}' is no mechanism (known: {})",
                                                              name, fmt::join(known, ", ")));
      }
    }
  }
  if (request.contains("workload"))
    r.workload = shipped_name(request, "workload", wl::shipped_workloads());
  if (request.contains("framework") && !string_at(request, "framework").empty())
    r.framework = shipped_name(request, "framework", wl::shipped_frameworks());
  r.comm = string_at(request, "comm");
  if (request.contains("precision")) r.precision = string_at(request, "precision");
  r.gpus = integers_at(request, "gpus", static_cast<std::size_t>(limits.max_gpu_counts), 1,
                       limits.max_gpus);
  r.batch = static_cast<int>(integer_at(request, "batch", 1, 1 << 20));
  if (request.contains("images")) r.images = integer_at(request, "images", 0, 1L << 40);
  return r;
}

// One transformer's layouts of a GPU count, as a train request names them.
struct TrainRequest {
  par::TrainJob job;  // the machine, the model, the precision and the layout's other settings
  int gpus = 0;
  std::vector<int> tps, pps;  // the layouts tried (empty: all valid ones)
};

TrainRequest parse_train_request(const std::string& body, const Limits& limits) {
  std::vector<std::string> keys = machine_keys(/*with_variability=*/false);
  keys.insert(keys.end(), {"workload", "precision", "gpus", "tp", "pp", "micro_batch",
                           "global_batch", "zero1", "sequence_parallel", "recompute"});
  const Json request =
      read_request(body, limits.max_request_bytes, keys, {"machine", "gpus"}, "every layout");
  TrainRequest t;
  const MachineRequest machine = read_machine(request);
  t.job.topology = machine.name;
  t.job.overrides = machine.set;
  t.job.topology_document = machine.document;
  if (request.contains("workload"))
    t.job.workload = shipped_name(request, "workload", wl::shipped_workloads());
  if (request.contains("precision") && !string_at(request, "precision").empty()) {
    t.job.precision =
        one_of(request, "precision", wl::precision_recipe_names(), "precision recipe");
  }
  t.gpus = static_cast<int>(integer_at(request, "gpus", 1, limits.max_gpus));
  constexpr std::size_t kMostWays = 16;
  if (request.contains("tp")) t.tps = integers_at(request, "tp", kMostWays, 1, limits.max_gpus);
  if (request.contains("pp")) t.pps = integers_at(request, "pp", kMostWays, 1, limits.max_gpus);
  par::ParallelLayout& l = t.job.layout;
  l.global_batch = kGlobalBatch;
  if (request.contains("micro_batch"))
    l.micro_batch = static_cast<int>(integer_at(request, "micro_batch", 1, 1 << 16));
  if (request.contains("global_batch"))
    l.global_batch = static_cast<int>(integer_at(request, "global_batch", 1, 1 << 24));
  if (request.contains("zero1")) l.zero1 = bool_at(request, "zero1");
  if (request.contains("sequence_parallel"))
    l.sequence_parallel = bool_at(request, "sequence_parallel");
  if (request.contains("recompute")) {
    l.recompute = par::recompute_by_name(
        one_of(request, "recompute", par::recompute_names(), "recomputation"));
  }
  return t;
}

sim::Experiment experiment_of(const RunRequest& r) {
  sim::Experiment e;
  e.topology = r.machine.name;
  e.topology_document = r.machine.document;
  for (const std::string& assignment : r.machine.set)
    sim::add_override(e, assignment, request_key("set"));
  e.workloads = {r.workload};
  e.framework = r.framework;
  e.comms = {r.comm};
  e.comms_written_at = {request_key("comm")};
  e.precision = r.precision;
  if (!r.precision.empty()) e.precision_written_at = request_key("precision");
  e.without = r.without;
  e.gpus = r.gpus;
  e.gpus_written_at.assign(r.gpus.size(), request_key("gpus"));
  e.batches = {r.batch};
  e.images = r.images;
  e.samples = r.samples;
  e.seed = r.seed;
  e.record_timeline = true;
  e.record_link_uses = true;
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

// The shipped models `train` lays out: those with attention layers (transformer_layers.hpp).
std::vector<std::string> transformers() {
  std::vector<std::string> names;
  for (const std::string& name : wl::shipped_workloads().names()) {
    if (wl::transformer_layers(wl::load_workload(name)).count > 0) names.push_back(name);
  }
  return names;
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
  const par::TrainJob layout_defaults;
  out["transformers"] = transformers();
  out["recomputes"] = par::recompute_names();
  out["train_defaults"] = {{"machine", layout_defaults.topology},
                           {"workload", layout_defaults.workload},
                           {"gpus", kTrainGpus},
                           {"micro_batch", layout_defaults.layout.micro_batch},
                           {"global_batch", kGlobalBatch},
                           {"recompute", par::to_string(layout_defaults.layout.recompute)}};
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

OrderedJson train(const std::string& body, const Limits& limits) {
  const TrainRequest request = parse_train_request(body, limits);
  return OrderedJson::parse(run_with_limit(
      [&request] {
        Json layouts = Json::array();
        for (const par::TrainResult& r : par::run_layout_sweep(request.job, request.gpus,
                                                                request.tps, request.pps))
          layouts.push_back(par::train_output_json(r));
        return Json{{"layouts", layouts}}.dump();
      },
      limits.max_run_seconds));
}

}  // namespace gpuscale::serve
