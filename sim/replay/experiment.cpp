#include "sim/replay/experiment.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "sim/compute/compute_model.hpp"
#include "sim/core/error.hpp"
#include "sim/replay/isolated.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/src/rings.hpp"
#include "topologies/src/topology_loader.hpp"
#include "workloads/src/dataset.hpp"
#include "workloads/src/memory_model.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::sim {
namespace {

using nlohmann::json;

struct Config {
  std::string workload;
  std::string comm;
  int batch;
  int gpus;
};

int gpus_per_node(const topo::Topology& t) {
  return static_cast<int>(std::count_if(t.gpus().begin(), t.gpus().end(),
                                        [&](int g) { return t.devices()[g].node == 0; }));
}

// The machine sized for `gpus`: a cluster grows (or shrinks) to the nodes the job needs.
topo::Topology machine_for(const Experiment& e, int gpus) {
  topo::TopologyConfig config = topo::load_topology_config(e.topology, e.topology_overrides);
  if (config.cluster) {
    // A cluster's config holds its node template: its GPUs are one node's.
    const long per_node = std::max<long>(
        1, std::count_if(config.devices.begin(), config.devices.end(),
                         [](const topo::DeviceConfig& d) { return d.kind == topo::DeviceKind::Gpu; }));
    auto overrides = e.topology_overrides;
    overrides.push_back(fmt::format("cluster.nodes={}", (gpus + per_node - 1) / per_node));
    config = topo::load_topology_config(e.topology, overrides);
  }
  return topo::Topology::build(config);
}

// One configuration, in the child process: returns its row as JSON.
std::string simulate(const Experiment& e, const Config& c) {
  const auto wall_start = std::chrono::steady_clock::now();
  const topo::Topology t = machine_for(e, c.gpus);
  const int per_node = gpus_per_node(t);
  if (c.gpus > static_cast<int>(t.gpus().size()) || (c.gpus > per_node && c.gpus % per_node != 0)) {
    throw ConfigError(Origin{"--gpus", 0},
                      fmt::format("{} GPUs do not fit '{}' ({} GPUs, {} per node): use at most {} "
                                  "or whole nodes of a cluster", c.gpus, t.name(), t.gpus().size(),
                                  per_node, t.gpus().size()));
  }
  topo::RoutingMode mode = t.default_routing();
  if (!e.routing.empty()) mode = *topo::routing_mode_from_string(e.routing);
  const topo::Router router(t, mode);

  ReplaySetup setup;
  setup.topology = &t;
  setup.router = &router;
  const int nodes = std::max(1, c.gpus / per_node);
  const int used_per_node = std::min(c.gpus, per_node);
  std::map<int, int> taken;  // GPUs chosen on each node
  for (int g : t.gpus()) {
    const int node = t.devices()[g].node;
    if (node >= nodes || taken[node] >= used_per_node) continue;
    ++taken[node];
    setup.gpus.push_back(g);
    setup.node_of_rank.push_back(node);
  }
  std::map<int, int> rank_of;
  for (size_t r = 0; r < setup.gpus.size(); ++r) rank_of[setup.gpus[r]] = static_cast<int>(r);
  for (const auto& ring : topo::find_rings(t, 32, used_per_node, nodes).rings) {
    std::vector<int> ranks;
    for (int device : ring) ranks.push_back(rank_of.at(device));
    setup.rings.push_back(std::move(ranks));
  }

  const wl::Workload w = wl::load_workload(c.workload);
  const wl::WorkloadCosts costs = wl::compute_costs(w);
  const compute::GpuSpec gpu = compute::load_gpu_spec(t.devices()[setup.gpus[0]].model);
  const compute::AnalyticParams params =
      compute::load_analytic_params(compute::shipped_analytic_params_path());
  std::unique_ptr<compute::ComputeTimeModel> model;
  if (e.profile.empty()) {
    model = compute::make_analytic_model(w, costs, gpu, params);
  } else {
    model = compute::make_profile_model(w, costs, compute::load_profile(e.profile), gpu, params);
  }
  setup.workload = &w;
  setup.costs = &costs;
  setup.compute = model.get();
  setup.batch = c.batch;
  setup.comm = c.comm;
  setup.fusion_bytes = e.fusion_mb * 1e6;
  setup.fusion_cycle_s = e.fusion_cycle_ms * 1e-3;
  setup.protocol = e.protocol;
  setup.iterations = e.iterations;
  const ReplayResult r = replay_iterations(setup);

  const wl::Dataset dataset = wl::load_dataset(w.dataset);
  const long images = (e.images > 0 ? e.images : dataset.samples) *
                      (e.scaling == Scaling::Weak ? c.gpus : 1);
  const double per_iteration = static_cast<double>(c.gpus) * c.batch;
  const double iterations = std::ceil(static_cast<double>(images) / per_iteration);

  wl::MemoryOptions memory;
  memory.batch = c.batch;
  memory.gpus = c.gpus;
  memory.exchange = wl::exchange_layout_of(c.comm);
  memory.fusion_buffer_bytes = is_kvstore_method(c.comm) ? 0 : setup.fusion_bytes;
  const auto parts = wl::estimate_memory(w, costs, wl::load_framework("mxnet"), memory);
  double max_other = 0;
  for (size_t g = 1; g < parts.size(); ++g) max_other = std::max(max_other, parts[g].total());

  json links = json::object();
  std::map<std::string, std::vector<double>> by_kind;
  for (const LinkLoad& load : r.link_loads) {
    const topo::Link& link = t.links()[static_cast<size_t>(load.link)];
    by_kind[topo::to_string(link.kind)].push_back(
        load.bytes_per_iteration / (r.iteration_s * link.effective_bandwidth().value));
  }
  for (const auto& [kind, values] : by_kind) {
    double sum = 0;
    for (double v : values) sum += v;
    links[kind] = {{"max", *std::max_element(values.begin(), values.end())},
                   {"mean", sum / static_cast<double>(values.size())}};
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return json{{"topology", t.name()},
              {"iteration_s", r.iteration_s},
              {"epoch_s", r.iteration_s * iterations},
              {"throughput_img_s", per_iteration / r.iteration_s},
              {"fpbp_s", r.fpbp_s},
              {"wu_s", r.wu_s},
              {"exposed_comm_s", r.exposed_comm_s},
              {"memory_gpu0_gb", parts[0].total() / 1e9},
              {"memory_max_other_gb", max_other / 1e9},
              {"link_utilisation", links},
              {"activities", r.activities},
              {"wall_s", wall}}
      .dump();
}

ResultRow row_of(const Experiment& e, const Config& c, const std::string& text) {
  const json j = json::parse(text);
  ResultRow row;
  row.topology = j["topology"];
  row.workload = c.workload;
  row.comm = c.comm;
  row.scaling = e.scaling == Scaling::Strong ? "strong" : "weak";
  row.gpus = c.gpus;
  row.batch = c.batch;
  row.iteration_s = j["iteration_s"];
  row.epoch_s = j["epoch_s"];
  row.throughput_img_s = j["throughput_img_s"];
  row.fpbp_s = j["fpbp_s"];
  row.wu_s = j["wu_s"];
  row.exposed_comm_s = j["exposed_comm_s"];
  row.memory_gpu0_gb = j["memory_gpu0_gb"];
  row.memory_max_other_gb = j["memory_max_other_gb"];
  for (const auto& [kind, u] : j["link_utilisation"].items()) {
    row.link_utilisation[kind] = {u["max"], u["mean"]};
  }
  row.activities = j["activities"];
  row.wall_s = j["wall_s"];
  return row;
}

}  // namespace

std::vector<ResultRow> run_experiment(const Experiment& e,
                                      const std::function<void(int, int, const ResultRow&)>& progress) {
  for (const std::string& comm : e.comms) algorithm_of(comm);  // unknown names fail first
  std::vector<Config> configs;
  for (const auto& workload : e.workloads) {
    for (const auto& comm : e.comms) {
      for (int batch : e.batches) {
        for (int gpus : e.gpus) configs.push_back({workload, comm, batch, gpus});
      }
    }
  }
  std::vector<ResultRow> rows;
  std::map<std::tuple<std::string, std::string, int>, double> one_gpu_epoch;
  const int total = static_cast<int>(configs.size());
  for (const Config& c : configs) {
    ResultRow row = row_of(e, c, run_isolated([&] { return simulate(e, c); }));
    if (c.gpus == 1) one_gpu_epoch[{c.workload, c.comm, c.batch}] = row.epoch_s;
    rows.push_back(std::move(row));
    if (progress) progress(static_cast<int>(rows.size()), total, rows.back());
  }
  // Speedup against the same method, workload and batch on one GPU (simulated if not asked for).
  for (ResultRow& row : rows) {
    const auto key = std::make_tuple(row.workload, row.comm, row.batch);
    if (!one_gpu_epoch.contains(key)) {
      const Config one{row.workload, row.comm, row.batch, 1};
      one_gpu_epoch[key] = row_of(e, one, run_isolated([&] { return simulate(e, one); })).epoch_s;
    }
    const double base = one_gpu_epoch[key];
    // Weak scaling: G GPUs do G times the work; speedup is the throughput ratio.
    row.speedup = e.scaling == Scaling::Strong ? base / row.epoch_s : base * row.gpus / row.epoch_s;
  }
  return rows;
}

}  // namespace gpuscale::sim
