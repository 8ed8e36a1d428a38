#include "validation/src/predictions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "sim/experiment/compute_setup.hpp"
#include "sim/experiment/experiment.hpp"
#include "sim/experiment/machine_setup.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/core/error.hpp"
#include "validation/src/claims.hpp"
#include "workloads/src/dataset.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/memory_model.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::validation {
namespace {

struct Model {
  wl::Workload workload;
  wl::WorkloadCosts costs;
  std::function<double(int)> workspace;  // cuDNN workspace at a per-GPU batch
  wl::FrameworkConfig framework;         // the one the network ran under
};

// The study ran each network on one of the setup's datasets and in its precision; a workload
// file that trains otherwise would be compared with runs it does not describe.
void check_workload(const Suite& suite, const NameMapping& network, const wl::Workload& w) {
  const Setup& setup = suite.setup;
  const std::string& precision = suite.precision_of(network.study);
  const bool dataset_fits =
      std::find(setup.datasets.begin(), setup.datasets.end(), w.dataset) != setup.datasets.end();
  if (!dataset_fits || w.recipe != precision) {
    throw ConfigError(
        network.origin,
        fmt::format("network {} maps to workload {}, which trains on {} in {}, but the "
                    "suite says {} in {} (map it to a workload of the suite's)",
                    network.study, network.gpuscale, w.dataset, w.recipe,
                    fmt::join(setup.datasets, " or "), precision));
  }
}

// The simulated machine's GPUs must have the memory the study's had. Returns their model.
std::string check_machine(const Machine& m) {
  const int most = *std::max_element(m.gpus.begin(), m.gpus.end());
  const topo::Topology machine = sim::machine_for(m.topology, {}, most);
  for (int g : machine.gpus()) {
    const topo::Device& gpu = machine.devices()[static_cast<size_t>(g)];
    if (gpu.memory && gpu.memory->value != m.gpu_memory.value) {
      throw ConfigError(m.origin,
                        fmt::format("{} is {}, but {}'s {} has {} (make them agree)",
                                    m.name.empty() ? "setup.gpu_memory"
                                                   : "gpu_memory of machine " + m.name,
                                    format_bytes(m.gpu_memory), machine.name(), gpu.name,
                                    format_bytes(*gpu.memory)));
    }
  }
  return machine.devices()[static_cast<size_t>(machine.gpus().front())].model;
}

// The largest batch of every max_batch claim's network, method, GPU count and GPU memory.
std::map<CapacityKey, int> largest_batches(const Suite& suite,
                                           const std::map<std::string, Model>& models) {
  std::map<CapacityKey, int> largest;
  for (const Claim& claim : suite.claims) {
    if (claim.kind != "max_batch") continue;
    const ClaimParams& p = claim.params;
    for (const auto& net : p.networks) {
      for (const auto& method : p.methods) {
        for (int g : p.gpus) {
          const Model& m = models.at(net);
          const wl::FrameworkConfig& framework = m.framework;
          const auto exchange = sim::make_exchange(
              sim::resolve_exchange(suite.comm_of(method), framework), framework, framework.allreduce);
          const wl::MemoryOptions options =
              sim::memory_options_of(*exchange, m.costs, framework.precision_of(m.workload), g, 1,
                                     m.workspace);
          largest[{net, method, g, p.gpu_memory.value}] =
              wl::largest_batch(m.workload, m.costs, framework, options, p.gpu_memory.value);
        }
      }
    }
  }
  return largest;
}

template <class T>
void add_once(std::vector<T>& values, const T& value) {
  if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
}

// Networks simulated together: the same methods' comms, at the same spatial split and batches,
// under the same framework. A suite whose networks ran with every method at every batch under
// the setup's framework is one group per spatial split.
struct RunGroup {
  int spatial = 1;
  bool batch_total = false;  // the batches are totals over the GPUs
  std::string framework;
  std::string input_pipeline;  // NameMapping::input_pipeline, written at `input_pipeline_at`
  Origin input_pipeline_at;
  std::vector<std::string> comms;
  std::vector<int> batches;
  std::vector<std::string> workloads;
  std::vector<std::string> networks;  // the study's names
};

// The groups of the networks that run on `machine` (empty: every network).
std::vector<RunGroup> run_groups(const Suite& suite, const Machine& machine) {
  std::vector<RunGroup> groups;
  for (const NameMapping& network : suite.networks) {
    const auto& only = machine.networks;
    if (!only.empty() && std::find(only.begin(), only.end(), network.study) == only.end())
      continue;
    std::vector<int> splits;
    const std::vector<std::string> methods = suite.methods_of(network.study);
    for (const auto& method : methods) add_once(splits, suite.spatial_of(method));
    for (int spatial : splits) {
      RunGroup mine{spatial,
                    suite.batch_total_of(network.study),
                    suite.framework_of(network.study),
                    network.input_pipeline,
                    network.input_pipeline_at,
                    {},
                    suite.batches_of(network.study),
                    {},
                    {}};
      for (const auto& method : methods) {
        if (suite.spatial_of(method) == spatial) add_once(mine.comms, suite.comm_of(method));
      }
      auto same = std::find_if(groups.begin(), groups.end(), [&](const RunGroup& g) {
        return g.spatial == mine.spatial && g.batch_total == mine.batch_total &&
               g.framework == mine.framework && g.input_pipeline == mine.input_pipeline &&
               g.comms == mine.comms && g.batches == mine.batches;
      });
      if (same == groups.end()) same = groups.insert(groups.end(), mine);
      add_once(same->workloads, network.gpuscale);
      same->networks.push_back(network.study);
    }
  }
  return groups;
}

}  // namespace

PredictedRun predicted_run(const sim::ResultRow& row) {
  return {row.iteration_s,    row.setup_s,         row.fpbp_s,
          row.wu_s,           row.memory_before_training_gb,
          row.memory_gpu0_gb, row.memory_max_other_gb,
          row.spatial_ways,   row.allreduce_bytes};
}

long strong_images_of(const Setup& setup, const wl::Workload& w) {
  return setup.strong_images_per_dataset ? wl::load_dataset(w.dataset).samples
                                         : setup.strong_images;
}

Predictions predict(const Suite& suite, const Progress& progress,
                    const std::vector<std::string>& without,
                    std::shared_ptr<const wl::FrameworkConfig> framework_config) {
  const Setup& setup = suite.setup;
  const std::vector<Machine> machines = setup.all_machines();
  std::vector<std::string> gpu_models;
  for (const Machine& m : machines) gpu_models.push_back(check_machine(m));
  // The cuDNN workspace of a max_batch claim is the setup machine's GPU's.
  const compute::GpuSpec gpu = compute::load_gpu_spec(gpu_models.front());
  // `framework_config` (a fit's candidate) stands for the setup's framework; a network that ran
  // under another keeps its own.
  auto framework_named = [&](const std::string& name) {
    return framework_config && name == setup.framework ? *framework_config
                                                       : wl::load_framework(name);
  };
  Predictions predictions;
  std::map<std::string, Model> models;  // by the study's network name
  for (const NameMapping& network : suite.networks) {
    wl::Workload w = wl::load_workload(network.gpuscale);
    check_workload(suite, network, w);
    predictions.strong_images[network.study] = strong_images_of(setup, w);
    wl::WorkloadCosts costs = wl::compute_costs(w);
    wl::FrameworkConfig framework = framework_named(suite.framework_of(network.study));
    auto workspace = sim::workspace_of(sim::compute_model_of(w, costs, framework, gpu), w);
    models.emplace(network.study, Model{std::move(w), std::move(costs), std::move(workspace),
                                        std::move(framework)});
  }

  // Strong-scaling experiments cover the weak runs too (metrics.hpp): one per machine, group of
  // runs and GPU count, since a total batch B on G GPUs runs B / G per GPU (every G divides B,
  // suite_loader.cpp). The iterations per epoch are the harness's (metrics.cpp), so the
  // experiment's own epoch is the dataset's.
  sim::Experiment base;
  base.without = without;
  base.decode_threads = setup.decode_threads;
  base.fusion_mb = setup.fusion_mb;
  if (setup.synthetic_data &&
      std::find(without.begin(), without.end(), "input") == without.end()) {
    base.without.push_back("input");
  }
  base.scaling = sim::Scaling::Strong;
  base.images = setup.strong_images_per_dataset ? 0 : setup.strong_images;
  std::vector<std::vector<RunGroup>> groups;  // by machine
  for (const Machine& machine : machines) groups.push_back(run_groups(suite, machine));
  struct Job {
    const Machine* machine;
    const RunGroup* group;
    sim::Experiment experiment;
  };
  std::vector<Job> jobs;
  size_t total = 0;
  for (size_t i = 0; i < machines.size(); ++i) {
    const Machine& machine = machines[i];
    for (const RunGroup& group : groups[i]) {
      for (int g : machine.gpus) {
        sim::Experiment e = base;
        e.topology = machine.topology;
        e.framework = group.framework;
        if (group.framework == setup.framework) e.framework_config = framework_config;
        e.input_pipeline = group.input_pipeline;
        e.input_pipeline_written_at = group.input_pipeline_at;
        e.workloads = group.workloads;
        e.comms = group.comms;
        e.spatial = group.spatial;
        e.gpus = {g};
        e.batches.clear();
        for (int b : group.batches) e.batches.push_back(group.batch_total ? b / g : b);
        total += e.workloads.size() * e.comms.size() * e.batches.size();
        jobs.push_back({&machine, &group, std::move(e)});
      }
    }
  }
  int done_before = 0;
  for (const Job& job : jobs) {
    const RunGroup& group = *job.group;
    const auto rows =
        sim::run_experiment(job.experiment, [&](int done, int, const sim::ResultRow& row) {
          if (progress) progress(done_before + done, static_cast<int>(total), row);
        });
    done_before += static_cast<int>(rows.size());
    for (const sim::ResultRow& row : rows) {
      const int batch = group.batch_total ? row.batch * row.gpus : row.batch;
      for (const std::string& network : group.networks) {
        if (suite.workload_of(network) != row.workload) continue;
        for (const std::string& method : suite.methods_of(network)) {
          const std::string comm =
              sim::resolve_exchange(suite.comm_of(method), models.at(network).framework).name;
          if (comm != row.comm || suite.spatial_of(method) != group.spatial) continue;
          predictions.runs[{network, method, row.gpus, batch, job.machine->name}] =
              predicted_run(row);
        }
      }
    }
  }
  predictions.largest_batches = largest_batches(suite, models);
  return predictions;
}

}  // namespace gpuscale::validation
