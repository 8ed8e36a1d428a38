#include "validation/src/predictions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "sim/core/error.hpp"
#include "sim/replay/compute_setup.hpp"
#include "sim/replay/experiment.hpp"
#include "sim/replay/machine_setup.hpp"
#include "sim/replay/replay.hpp"
#include "validation/src/claims.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/memory_model.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::validation {
namespace {

struct Model {
  wl::Workload workload;
  wl::WorkloadCosts costs;
  std::function<double(int)> workspace;  // cuDNN workspace at a per-GPU batch
};

// The study ran each network on the setup's dataset and precision; a workload file that trains
// otherwise would be compared with runs it does not describe.
void check_workload(const Setup& setup, const NameMapping& network, const wl::Workload& w) {
  if (w.dataset != setup.dataset || to_string(w.precision) != setup.precision) {
    throw ConfigError(
        network.origin,
        fmt::format("network {} maps to workload {}, which trains on {} in {}, but the "
                    "setup says {} in {} (map it to a workload of the setup's)",
                    network.study, network.gpuscale, w.dataset, to_string(w.precision),
                    setup.dataset, setup.precision));
  }
}

// The simulated machine's GPUs must have the memory the study's had. Returns their model.
std::string check_machine(const Setup& setup) {
  const int most = *std::max_element(setup.gpus.begin(), setup.gpus.end());
  const topo::Topology machine = sim::machine_for(setup.topology, {}, most);
  for (int g : machine.gpus()) {
    const topo::Device& gpu = machine.devices()[static_cast<size_t>(g)];
    if (gpu.memory && gpu.memory->value != setup.gpu_memory.value) {
      throw ConfigError(setup.origin,
                        fmt::format("setup.gpu_memory is {}, but {}'s {} has {} (make them agree)",
                                    format_bytes(setup.gpu_memory), machine.name(), gpu.name,
                                    format_bytes(*gpu.memory)));
    }
  }
  return machine.devices()[static_cast<size_t>(machine.gpus().front())].model;
}

// The largest batch of every max_batch claim's network, method, GPU count and GPU memory.
std::map<CapacityKey, int> largest_batches(const Suite& suite,
                                           const std::map<std::string, Model>& models,
                                           const wl::FrameworkConfig& framework) {
  std::map<CapacityKey, int> largest;
  for (const Claim& claim : suite.claims) {
    if (claim.kind != "max_batch") continue;
    const ClaimParams& p = claim.params;
    for (const auto& net : p.networks) {
      for (const auto& method : p.methods) {
        for (int g : p.gpus) {
          const Model& m = models.at(net);
          largest[{net, method, g, p.gpu_memory.value}] =
              wl::largest_batch(m.workload, m.costs, framework,
                                sim::memory_options_of(framework, suite.comm_of(method), g, 1,
                                                        framework.allreduce.buffer.value,
                                                        m.workspace),
                                p.gpu_memory.value);
        }
      }
    }
  }
  return largest;
}

// gpuscale's names in a mapping, each once (two study names may map to one).
std::vector<std::string> distinct_targets(const std::vector<NameMapping>& mappings) {
  std::vector<std::string> names;
  for (const NameMapping& m : mappings) {
    if (std::find(names.begin(), names.end(), m.gpuscale) == names.end())
      names.push_back(m.gpuscale);
  }
  return names;
}

}  // namespace

Predictions predict(const Suite& suite, const Progress& progress,
                    const std::vector<std::string>& without,
                    std::shared_ptr<const wl::FrameworkConfig> framework_config) {
  const Setup& setup = suite.setup;
  const compute::GpuSpec gpu = compute::load_gpu_spec(check_machine(setup));
  const wl::FrameworkConfig framework =
      framework_config ? *framework_config : wl::load_framework(setup.framework);
  std::map<std::string, Model> models;  // by the study's network name
  for (const NameMapping& network : suite.networks) {
    wl::Workload w = wl::load_workload(network.gpuscale);
    check_workload(setup, network, w);
    wl::WorkloadCosts costs = wl::compute_costs(w);
    auto workspace = sim::workspace_of(sim::compute_model_of(w, costs, framework, gpu), w);
    models.emplace(network.study, Model{std::move(w), std::move(costs), std::move(workspace)});
  }

  // Strong-scaling experiments cover the weak runs too (metrics.hpp): one per GPU count, since a
  // total batch B on G GPUs runs B / G per GPU (every G divides B, suite_loader.cpp).
  sim::Experiment base;
  base.topology = setup.topology;
  base.framework = setup.framework;
  base.framework_config = std::move(framework_config);
  base.without = without;
  base.decode_threads = setup.decode_threads;
  if (setup.synthetic_data &&
      std::find(without.begin(), without.end(), "input") == without.end()) {
    base.without.push_back("input");
  }
  base.workloads = distinct_targets(suite.networks);
  base.comms = distinct_targets(suite.methods);
  base.scaling = sim::Scaling::Strong;
  base.images = setup.strong_images;
  std::vector<sim::Experiment> experiments;
  size_t total = 0;
  for (int g : setup.gpus) {
    sim::Experiment e = base;
    e.gpus = {g};
    e.batches.clear();
    for (int b : setup.batches) e.batches.push_back(setup.batch_total ? b / g : b);
    total += e.workloads.size() * e.comms.size() * e.batches.size();
    experiments.push_back(std::move(e));
  }
  std::vector<sim::ResultRow> rows;
  for (const sim::Experiment& e : experiments) {
    const int done_before = static_cast<int>(rows.size());
    const auto batch_rows = sim::run_experiment(e, [&](int done, int, const sim::ResultRow& row) {
      if (progress) progress(done_before + done, static_cast<int>(total), row);
    });
    rows.insert(rows.end(), batch_rows.begin(), batch_rows.end());
  }

  Predictions predictions;
  for (const sim::ResultRow& row : rows) {
    for (const NameMapping& network : suite.networks) {
      if (network.gpuscale != row.workload) continue;
      const int batch = setup.batch_total ? row.batch * row.gpus : row.batch;
      for (const NameMapping& method : suite.methods) {
        if (method.gpuscale != row.comm) continue;
        predictions.runs[{network.study, method.study, row.gpus, batch}] =
            PredictedRun{row.iteration_s,    row.setup_s,         row.fpbp_s,
                         row.wu_s,           row.memory_before_training_gb,
                         row.memory_gpu0_gb, row.memory_max_other_gb};
      }
    }
  }
  predictions.largest_batches = largest_batches(suite, models, framework);
  return predictions;
}

}  // namespace gpuscale::validation
