#include "sim/experiment/experiment.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>

#include "sim/engine/isolated.hpp"
#include "sim/experiment/collective_run.hpp"
#include "sim/experiment/compute_setup.hpp"
#include "sim/experiment/machine_setup.hpp"
#include "sim/experiment/replay_inputs.hpp"
#include "sim/experiment/result_row_codec.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/run_setup.hpp"
#include "topologies/core/distribution.hpp"
#include "topologies/core/shipped_files.hpp"
#include "workloads/src/dataset.hpp"
#include "workloads/src/memory_model.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::sim {
namespace {

// The iteration of `k` micro-batches per exchange (gradient accumulation), from the replay of the
// one that exchanges: the k - 1 before it are that iteration less its exchange and update (WU),
// with no forward overlapping an exchange (overlap_s back in), i.e. FP+BP, input wait and host
// time at the micro-batch. The links carry the exchange's bytes once per k micro-batches.
ReplayResult accumulated(ReplayResult r, int k) {
  if (k == 1) return r;
  const double before_s = (k - 1) * (r.iteration_s - r.wu_s + r.overlap_s);
  r.iteration_s += before_s;
  r.fpbp_s *= k;
  r.input_wait_s *= k;
  r.rest_s += (k - 1) * (r.rest_s + r.overlap_s);
  r.compute_s *= k;
  r.exposed_comm_s = std::max(0.0, r.iteration_s - r.compute_s);
  for (double& t : r.iteration_times_s) t += before_s;
  return r;
}

}  // namespace

ResultRow simulate_configuration(const Experiment& e, const Configuration& c) {
  const auto wall_start = std::chrono::steady_clock::now();
  const ReplayInputs inputs(e, c);
  const topo::Topology& t = inputs.machine;
  const wl::Workload& w = inputs.workload;
  const wl::WorkloadCosts& costs = inputs.costs;
  const ReplayResult r = accumulated(replay_iterations(inputs.setup), c.accumulate);
  const double setup_s =
      inputs.setup.mechanisms.setup ? run_setup_cost(inputs.setup).total_s() : 0;

  const wl::Dataset dataset = wl::load_dataset(w.dataset);
  const long images = (e.images > 0 ? e.images : dataset.samples) *
                      (e.scaling == Scaling::Weak ? c.gpus : 1);
  const double per_iteration = samples_per_iteration(e, c);
  const double iterations = std::ceil(static_cast<double>(images) / per_iteration);

  wl::MemoryOptions memory =
      memory_options_of(*inputs.exchange, costs, *inputs.setup.precision, c.gpus, c.batch,
                        workspace_of(inputs.compute, w));
  memory.halo_elements_per_sample = inputs.halo ? inputs.halo->kept_elements_per_sample() : 0;
  if (inputs.framework.input.on_gpu && dataset.gpu_decode) {
    memory.decoded_image_pixels = dataset.gpu_decode->pixels;
  }
  const auto parts = wl::estimate_memory(w, costs, inputs.framework, memory);
  double max_other = 0;
  for (size_t g = 1; g < parts.size(); ++g) max_other = std::max(max_other, parts[g].total());
  double gpu_memory = std::numeric_limits<double>::infinity();
  for (int g : inputs.placement.gpus) {
    gpu_memory = std::min(gpu_memory, t.devices()[static_cast<size_t>(g)].memory->value);
  }

  ResultRow row;
  row.topology = t.name();
  row.workload = c.workload;
  row.comm = c.comm;
  row.exchange = inputs.framework.name + ": " + inputs.exchange->describe();
  row.framework = inputs.framework.name;
  row.precision = inputs.setup.precision->name;
  row.scaling = e.scaling == Scaling::Strong ? "strong" : "weak";
  row.gpus = c.gpus;
  row.batch = c.batch;
  row.accumulate = c.accumulate;
  row.spatial_ways = spatial_ways(e, c);
  row.iteration_s = r.iteration_s;
  row.setup_s = setup_s;
  row.epoch_s = setup_s + r.iteration_s * iterations;
  row.throughput_img_s = per_iteration / r.iteration_s;
  row.unit = dataset.unit;
  row.fpbp_s = r.fpbp_s;
  row.wu_s = r.wu_s;
  row.input_wait_s = r.input_wait_s;
  row.overlap_s = r.overlap_s;
  row.rest_s = r.rest_s;
  row.exposed_comm_s = r.exposed_comm_s;
  row.allreduce_bytes = r.allreduce_bytes;
  if (e.samples > 0) {
    const std::vector<double>& times = r.iteration_times_s;
    const topo::MachineVariability& v = t.variability();
    row.spread = {.samples = static_cast<int>(times.size()),
                  .machine_varies = v.compute.varies() || v.host.varies(),
                  .p10_s = quantile(times, 0.1), .p50_s = quantile(times, 0.5),
                  .p90_s = quantile(times, 0.9)};
  }
  row.memory_gpu0_gb = parts[0].total() / 1e9;
  row.memory_max_other_gb = max_other / 1e9;
  row.memory_before_training_gb = parts[0].before_training() / 1e9;
  row.gpu_memory_gb = gpu_memory / 1e9;
  std::map<std::string, std::vector<double>> by_kind;
  for (const LinkLoad& load : r.link_loads) {
    const topo::Link& link = t.links()[static_cast<size_t>(load.link)];
    const double use =
        load.bytes_per_iteration / (r.iteration_s * link.effective_bandwidth().value);
    by_kind[topo::to_string(link.kind)].push_back(use);
    if (e.record_link_uses) row.link_uses.push_back({load.link, load.forward, use});
  }
  for (const auto& [kind, values] : by_kind) {
    double sum = 0;
    for (double v : values) sum += v;
    row.link_utilisation[kind] = {*std::max_element(values.begin(), values.end()),
                                  sum / static_cast<double>(values.size())};
  }
  row.activities = r.activities;
  row.timeline.events = r.timeline;
  row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return row;
}

wl::AllreduceModel allreduce_of(const Experiment& e, const wl::FrameworkConfig& framework) {
  wl::AllreduceModel a = framework.allreduce;
  if (e.fusion_mb) a.buffer = Bytes{*e.fusion_mb * 1e6};
  if (e.fusion_cycle_ms) a.cycle = Seconds{*e.fusion_cycle_ms * 1e-3};
  return a;
}

namespace {

// A framework file, parsed once per process and content: an experiment asks its framework for
// every configuration and row, and `gpuscale fit` may rewrite the file between two asks.
const wl::FrameworkConfig& framework_file(const std::string& name) {
  static std::map<std::string, std::pair<std::string, wl::FrameworkConfig>> parsed;
  const std::string path = wl::shipped_frameworks().resolve(name, "", Origin{});
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto it = parsed.find(name);
  if (it == parsed.end() || it->second.first != bytes) {
    it = parsed.insert_or_assign(name, std::pair{std::move(bytes), wl::load_framework(name)}).first;
  }
  return it->second.second;
}

}  // namespace

void add_override(Experiment& e, const std::string& assignment, const Origin& written_at) {
  constexpr std::string_view kWorkload = "workload.";
  if (assignment.starts_with(kWorkload)) {
    std::string one = assignment.substr(kWorkload.size());
    // A file a workload names (its dataset, its framework) is taken from the folder of the file
    // that writes it, as every path in a file is; on the command line, from where it runs.
    const size_t equals = one.find('=');
    const std::string key = one.substr(0, equals);
    if (equals != std::string::npos && (key == "dataset" || key == "framework"))
      one = key + "=" + file_or_name(one.substr(equals + 1), folder_of(written_at));
    e.workload_overrides.push_back(one);
    return;
  }
  const std::string key = assignment.substr(0, assignment.find_first_of(".="));
  const auto& workload_keys = wl::workload_file_keys();
  // `name` and `description` are keys of a machine file too.
  if (key != "name" && key != "description" &&
      std::find(workload_keys.begin(), workload_keys.end(), key) != workload_keys.end()) {
    throw ConfigError(written_at, fmt::format("'{}' is a key of a workload, not of the machine: "
                                              "write workload.{} to set it on every workload",
                                              key, assignment));
  }
  e.topology_overrides.push_back(assignment);
}

std::string framework_name_for(const Experiment& e, const std::string& workload) {
  return wl::framework_for(workload, e.framework, e.workload_overrides);
}

Experiment for_workload(const Experiment& e, const std::string& workload) {
  Experiment one = e;
  one.workloads = {workload};
  one.framework = framework_name_for(e, workload);
  return one;
}

namespace {

// The framework named for every workload of `e`; throws if they differ.
std::string one_framework_name(const Experiment& e) {
  if (!e.framework.empty()) return e.framework;
  std::vector<std::string> names, named;  // each workload's framework, read once
  for (const std::string& w : e.workloads) {
    names.push_back(framework_name_for(e, w));
    named.push_back(w + ": " + names.back());
  }
  if (std::adjacent_find(names.begin(), names.end(), std::not_equal_to<>()) != names.end()) {
    throw ConfigError(Origin{"--framework", 0},
                      fmt::format("the workloads were published with different frameworks ({}): "
                                  "give --framework, or run them apart",
                                  fmt::join(named, ", ")));
  }
  return names.front();
}

}  // namespace

wl::FrameworkConfig framework_of(const Experiment& e) {
  wl::FrameworkConfig f =
      e.framework_config ? *e.framework_config : framework_file(one_framework_name(e));
  if (e.input_pipeline == "dali") {
    if (!f.dali_input) {
      throw ConfigError(e.input_pipeline_written_at,
                        fmt::format("framework {} ({}) has no DALI pipeline (`dali_input:`): "
                                    "leave out the input pipeline, or use a framework that has "
                                    "one (mxnet, pytorch-ddp, pytorch-horovod)",
                                    f.name, f.file));
    }
    f.input = *f.dali_input;
  }
  if (e.decode_threads) f.input.decode_threads = *e.decode_threads;
  return f;
}

const std::vector<std::string>& input_pipeline_names() {
  static const std::vector<std::string> names = {"cpu", "dali"};
  return names;
}

int decode_threads_of(const Experiment& e) { return framework_of(e).input.decode_threads; }

double allreduce_buffer_mb(const Experiment& e) {
  return e.fusion_mb ? *e.fusion_mb : framework_of(e).allreduce.buffer.value / 1e6;
}

std::vector<ExchangeChoice> exchanges_of(const Experiment& e, const wl::FrameworkConfig& framework) {
  std::vector<ExchangeChoice> exchanges;
  for (size_t i = 0; i < e.comms.size(); ++i) {
    const Origin written_at =
        e.comms_written_at.size() == e.comms.size() ? e.comms_written_at[i] : Origin{"--comm", 0};
    exchanges.push_back(resolve_exchange(e.comms[i], framework, written_at));
  }
  return exchanges;
}

std::unique_ptr<ExchangeMethod> exchange_of(const Experiment& e, const wl::FrameworkConfig& framework,
                                            const std::string& comm) {
  return make_exchange(resolve_exchange(comm, framework), framework, allreduce_of(e, framework));
}

wl::MemoryOptions memory_options_of(const ExchangeMethod& method, const wl::WorkloadCosts& costs,
                                    const wl::PrecisionRecipe& precision, int gpus, int batch,
                                    std::function<double(int)> workspace_bytes) {
  wl::MemoryOptions o;
  o.batch = batch;
  o.gpus = gpus;
  o.exchange = method.exchange_buffers(costs, precision, gpus);
  o.workspace_bytes = std::move(workspace_bytes);
  return o;
}

std::string slow_simulation_reason(const ExchangeChoice& exchange, int gpus) {
  constexpr double kCopySecondsPerGpuSquared = 1e-3;  // measured: experiment.hpp
  if (exchange.exchange == "kvstore_device") {
    const double seconds = gpus > 16 ? kCopySecondsPerGpuSquared * gpus * gpus : 0;
    if (seconds < 30) return "";
    return fmt::format("takes the simulator about {:.0f} minutes per configuration (its per-key "
                       "copies share the fabric; the time grows with the square of the GPUs); "
                       "MXNet's kvstore=device reduces within one machine: nccl or hierarchical "
                       "simulate this in seconds",
                       std::ceil(seconds / 60));
  }
  if (exchange.exchange != "allreduce") return "";
  return flow_by_flow_reason(exchange.algorithm, coll::Collective::AllReduce, gpus);
}

int spatial_ways(const Experiment& e, const Configuration& c) {
  return c.gpus == 1 ? 1 : e.spatial;
}

double samples_per_iteration(const Experiment& e, const Configuration& c) {
  return static_cast<double>(c.gpus) * c.batch * c.accumulate / spatial_ways(e, c);
}

void check_gpu_counts(const Experiment& e) {
  if (e.spatial < 1) {
    throw ConfigError(e.spatial_written_at, fmt::format("must be at least 1, not {}", e.spatial));
  }
  if (e.spatial > 1 && !e.profile.empty()) {
    throw ConfigError(e.spatial_written_at,
                      "needs the analytic compute model: a measured profile holds whole layers, "
                      "not the blocks of a split sample; drop the profile or the spatial split");
  }
  for (size_t i = 0; i < e.gpus.size(); ++i) {
    const Origin written_at =
        e.gpus_written_at.size() == e.gpus.size() ? e.gpus_written_at[i] : Origin{"--gpus", 0};
    if (e.gpus[i] > 1 && e.gpus[i] % e.spatial != 0) {
      throw ConfigError(written_at, fmt::format("{} GPUs cannot form groups of {} (spatial): use "
                                                "a multiple of {}",
                                                e.gpus[i], e.spatial, e.spatial));
    }
    // A cluster is sized to the count (machine_config_for), so each count has its own machine.
    // Its description is enough; building it (ports, connections) is the configuration's work.
    check_job_fits(
        machine_config_for(e.topology, e.topology_overrides, e.gpus[i], e.topology_document),
        e.gpus[i], written_at);
  }
}

namespace {

// The configurations of `e` that train `workload` with `comm`: every batch per GPU and GPU count,
// or at a global batch each GPU count's share in `accumulate` micro-batches (one, if `e` leaves
// it to the memory: run_experiment adds more where a share does not fit).
std::vector<Configuration> configurations_of(const Experiment& e, const std::string& workload,
                                             const std::string& comm) {
  const int k = std::max(1, e.accumulate);
  std::vector<Configuration> out;
  if (e.global_batch == 0) {
    for (int batch : e.batches) {
      for (int gpus : e.gpus) out.push_back({workload, comm, batch, gpus, k});
    }
    return out;
  }
  for (int gpus : e.gpus) {
    const long groups = gpus == 1 ? 1 : gpus / e.spatial;  // each holds whole samples
    if (e.global_batch % (groups * k) != 0) {
      throw ConfigError(e.global_batch_written_at,
                        fmt::format("a global batch of {} does not split into {} equal shares "
                                    "of {} micro-batches ({} GPUs): give a global batch every "
                                    "GPU count divides",
                                    e.global_batch, groups, k, gpus));
    }
    out.push_back({workload, comm, static_cast<int>(e.global_batch / (groups * k)), gpus, k});
  }
  return out;
}

// The samples per exchange that a configuration's speedup compares at: the batch per GPU (the
// same on one GPU), or the global batch.
long speedup_batch(const Experiment& e, const Configuration& c) {
  return e.global_batch > 0 ? e.global_batch : c.batch;
}

}  // namespace

std::vector<ResultRow> run_experiment(const Experiment& e,
                                      const std::function<void(int, int, const ResultRow&)>& progress) {
  if (e.global_batch > 0 && e.scaling == Scaling::Weak) {
    throw ConfigError(e.global_batch_written_at, "a global batch is strong scaling (the GPUs share "
                                                 "it): drop weak scaling, or give a batch per GPU");
  }
  // Each workload under its framework (framework_name_for). Unknown names, methods a framework
  // lacks and global batches that do not split fail before anything is simulated.
  std::map<std::string, Experiment> by_workload;
  std::vector<std::pair<const Experiment*, Configuration>> configs;
  mechanisms_without(e.without);
  check_gpu_counts(e);
  for (const auto& workload : e.workloads) {
    const Experiment& one = by_workload.emplace(workload, for_workload(e, workload)).first->second;
    for (const ExchangeChoice& exchange : exchanges_of(one, framework_of(one))) {
      for (const Configuration& c : configurations_of(one, workload, exchange.name))
        configs.push_back({&one, c});
    }
  }
  // A global batch's share that does not fit its GPUs is run in more micro-batches, the fewest
  // that fit (unless the experiment fixes them).
  auto simulate = [](const Experiment& one, Configuration c) {
    ResultRow row = run_isolated_as([&] { return simulate_configuration(one, c); });
    if (one.global_batch == 0 || one.accumulate > 0) return row;
    const int share = c.batch * c.accumulate;
    for (int k = c.accumulate + 1; k <= share && !row.fits_memory(); ++k) {
      if (share % k != 0) continue;
      c.batch = share / k;
      c.accumulate = k;
      row = run_isolated_as([&] { return simulate_configuration(one, c); });
    }
    return row;
  };
  std::vector<ResultRow> rows;
  std::map<std::tuple<std::string, std::string, long>, double> one_gpu_epoch;
  const int total = static_cast<int>(configs.size());
  for (const auto& [one, c] : configs) {
    ResultRow row = simulate(*one, c);
    if (c.gpus == 1) one_gpu_epoch[{c.workload, c.comm, speedup_batch(e, c)}] = row.epoch_s;
    rows.push_back(std::move(row));
    if (progress) progress(static_cast<int>(rows.size()), total, rows.back());
  }
  // Speedup against the same method, workload and batch on one GPU (simulated if not asked for).
  for (ResultRow& row : rows) {
    const Experiment& one = by_workload.at(row.workload);
    Configuration on_one{row.workload, row.comm, row.batch, 1, row.accumulate};
    if (e.global_batch > 0) {
      Experiment single = one;
      single.gpus = {1};
      on_one = configurations_of(single, row.workload, row.comm).front();
    }
    const auto key = std::make_tuple(row.workload, row.comm, speedup_batch(e, on_one));
    if (!one_gpu_epoch.contains(key)) one_gpu_epoch[key] = simulate(one, on_one).epoch_s;
    set_speedup(row, e.scaling, one_gpu_epoch[key]);
  }
  return rows;
}

void set_speedup(ResultRow& row, Scaling scaling, double one_gpu_epoch_s) {
  // Weak scaling: G GPUs do G times the work; speedup is the throughput ratio.
  row.speedup = scaling == Scaling::Strong ? one_gpu_epoch_s / row.epoch_s
                                           : one_gpu_epoch_s * row.gpus / row.epoch_s;
  IterationSpread& s = row.spread;
  if (s.samples == 0) return;
  // The speedup of an epoch whose iterations all took `iteration_s`.
  const double iterations = (row.epoch_s - row.setup_s) / row.iteration_s;
  const auto speedup_at = [&](double iteration_s) {
    return row.speedup * row.epoch_s / (row.setup_s + iteration_s * iterations);
  };
  s.speedup_p10 = speedup_at(s.p90_s);
  s.speedup_p50 = speedup_at(s.p50_s);
  s.speedup_p90 = speedup_at(s.p10_s);
}

}  // namespace gpuscale::sim
