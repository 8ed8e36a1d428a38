#include "tools/gpuscale/workload_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "sim/exchange/registry.hpp"
#include "sim/experiment/compute_setup.hpp"
#include "sim/experiment/experiment.hpp"
#include "sim/replay/replay.hpp"
#include "tools/gpuscale/exchange_options.hpp"
#include "tools/gpuscale/layer_times_command.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/units.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/workload_at_precision.hpp"
#include "workloads/src/workload_document.hpp"
#include "workloads/src/workload_loader.hpp"
#include "workloads/src/workload_report.hpp"

namespace gpuscale::cli {
namespace {

struct ShowOptions {
  std::string model;
  std::string format = "table";
  int batch = 32;
  int gpus = 1;
  ExchangeOptions exchange;  // whose buffers to count (default p2p)
  std::string gpu_memory = "16 GB";  // a V100's HBM2 (brief §6)
  std::string framework;  // empty: the model's own (wl::framework_for)
  std::string gpu = "V100-SXM2";
  std::string precision;  // empty: the workload's own
  std::vector<std::string> overrides;
};

void list_workloads() {
  const std::vector<std::string> names = wl::shipped_workloads().names();
  size_t width = 4;
  for (const std::string& name : names) width = std::max(width, name.size());
  std::string out = fmt::format("{:<{}} {:>9} {:>9} {:>12}  {}\n", "name", width, "params",
                                "GMAC/img", "input", "description");
  for (const auto& name : names) {
    const wl::Workload w = wl::load_workload(name);
    const wl::WorkloadCosts c = wl::compute_costs(w);
    out += fmt::format("{:<{}} {:>8.2f}M {:>9.3f} {:>12}  {}\n", name, width, c.params / 1e6,
                       c.fwd_macs / 1e9, to_string(w.layers[0].output), w.description);
  }
  std::cout << out;
}

void show_workload(const ShowOptions& o, const CLI::App& show) {
  double capacity = 0;
  try {
    capacity = parse_bytes(o.gpu_memory).value;
  } catch (const std::invalid_argument& e) {
    throw ConfigError(Origin{"--gpu-memory", 0}, e.what());
  }
  const wl::Workload w =
      wl::load_workload_at(o.model, o.precision, Origin{"--precision", 0}, o.overrides);
  const wl::WorkloadCosts costs = wl::compute_costs(w);
  const wl::Dataset dataset = wl::load_dataset(w.dataset);
  const wl::FrameworkConfig framework = wl::load_framework(
      wl::framework_for(o.model, o.framework, o.overrides), Origin{"--framework", 0});
  const compute::GpuSpec gpu = compute::load_gpu_spec(o.gpu, Origin{"--gpu", 0});
  // The buffers the run would hold: the same options `gpuscale run` gives the memory model.
  const auto compute = sim::compute_model_of(w, costs, framework, gpu);
  std::vector<std::string> names = exchange_names(o.exchange, show);
  if (names.size() > 1) {
    throw ConfigError({"--exchange", 0}, "shows the buffers of one exchange: give one method");
  }
  const sim::ExchangeChoice choice =
      sim::resolve_exchange(names.empty() ? "p2p" : names.front(), framework);
  const auto exchange = sim::make_exchange(choice, framework, framework.allreduce);
  const wl::MemoryOptions memory =
      sim::memory_options_of(*exchange, costs, framework.precision_of(w), o.gpus, o.batch,
                             sim::workspace_of(compute, w));
  // A method that runs the run's algorithm prints as the method (allreduce), one that makes its
  // own transfers as its alias (p2p).
  const std::string label =
      sim::find_exchange_method(choice.exchange).comm_alias.empty() ? choice.exchange : choice.name;
  const wl::WorkloadView view{w, costs, dataset, framework, memory, label, capacity};
  // Rendered whole before printing: an error never leaves half an output behind.
  const std::string out =
      o.format == "json" ? wl::workload_json(view).dump(2) + "\n" : wl::workload_table(view);
  std::cout << out;
}

}  // namespace

void add_workload_commands(CLI::App& app) {
  auto* cmd = app.add_subcommand("workload", "The models gpuscale trains");
  cmd->require_subcommand(1);
  cmd->add_subcommand("list", "List the shipped models")->callback(list_workloads);

  auto o = std::make_shared<ShowOptions>();
  auto* show = cmd->add_subcommand("show", "Show a model: layers, shapes, costs, memory per GPU");
  show->add_option("model", o->model, "A shipped model name or a .yaml file")->required();
  show->add_option("--batch", o->batch, "Samples per GPU per iteration")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  show->add_option("--gpus", o->gpus, "GPUs training together (for the exchange's buffers)")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  add_exchange_options(*show, o->exchange, "p2p", false);
  show->add_option("--gpu-memory", o->gpu_memory, "GPU memory, for the largest batch that fits")
      ->capture_default_str();
  show->add_option("--framework", o->framework, "Framework constants (workloads/frameworks); "
                                                "default: the model's own, the one its file "
                                                "names (`framework:`), else mxnet");
  show->add_option("--gpu", o->gpu, "GPU model whose kernel times and workspace to show")
      ->capture_default_str();
  show->add_option("--precision", o->precision,
                   "Precision recipe, as the framework runs it (default: the workload's)")
      ->check(CLI::IsMember(wl::precision_recipe_names()));
  show->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  show->add_option("--set", o->overrides,
                   "Override a value of the file: KEY.PATH=VALUE (e.g. args.doublings=1)")
      ->allow_extra_args(false);
  show->callback([o, show] { show_workload(*o, *show); });

  add_layer_times_command(*cmd);
}

}  // namespace gpuscale::cli
