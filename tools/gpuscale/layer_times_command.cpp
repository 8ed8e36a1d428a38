#include "tools/gpuscale/layer_times_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "sim/compute/compute_model.hpp"
#include "sim/experiment/layer_times.hpp"
#include "topologies/core/csv.hpp"
#include "topologies/core/units.hpp"
#include "workloads/src/precision_recipe.hpp"

namespace gpuscale::cli {
namespace {

using compute::TrainingPass;

struct LayersOptions {
  sim::LayerTimesRequest request;
  std::string format = "table";
};

constexpr std::array kPasses = {TrainingPass::forward, TrainingPass::backward_data,
                                TrainingPass::backward_weights};

using sim::LayerTimes;
using sim::LayerTimesReport;

double micros(Seconds t) { return t.value * 1e6; }

double total_of(const LayerTimesReport& r, TrainingPass pass) {
  return r.total_us[static_cast<size_t>(pass)];
}

// A convolution pass is the one whose plan names an algorithm (compute::PassPlan).
bool is_conv(const compute::PassPlan& plan) { return !plan.algorithm.empty(); }

// "winograd/-/implicit_gemm": each pass's algorithm, "-" for a pass the layer lacks; empty for a
// layer that runs no convolution.
std::string algorithms_of(const LayerTimes& row) {
  if (std::none_of(row.passes.begin(), row.passes.end(),
                   [](const sim::LayerPassTime& p) { return is_conv(p.plan); })) {
    return "";
  }
  std::string out;
  for (TrainingPass pass : kPasses) {
    const compute::PassPlan* plan = row.plan_of(pass);
    if (pass != kPasses.front()) out += "/";
    out += plan ? plan->algorithm : "-";
  }
  return out;
}

std::string time_cell(const LayerTimes& row, TrainingPass pass) {
  const compute::PassPlan* plan = row.plan_of(pass);
  return plan ? fmt::format("{:.1f}", micros(plan->time)) : "-";
}

// The arithmetic every pass of the layer runs at (one per layer: a recipe gives a layer one).
std::string precision_cell(const LayerTimes& row) {
  return compute::to_string(row.passes.front().plan.precision);
}

// "12.3/0.0/4.5": the recipe's casts in forward, backward-data and backward-weights, µs (a pass
// the layer lacks: 0); "-" for none.
std::string cast_cell(const LayerTimes& row) {
  double total = 0;
  std::array<double, compute::kTrainingPassCount> casts{};
  for (int p = 0; p < compute::kTrainingPassCount; ++p) {
    const compute::PassPlan* plan = row.plan_of(static_cast<TrainingPass>(p));
    casts[static_cast<size_t>(p)] = plan ? micros(plan->cast_time) : 0.0;
    total += casts[static_cast<size_t>(p)];
  }
  if (total == 0) return "-";
  return fmt::format("{:.1f}/{:.1f}/{:.1f}", casts[0], casts[1], casts[2]);
}

std::string layer_times_table(const LayerTimesReport& r) {
  std::string out = fmt::format("{} at batch {} per GPU with {}, {}, precision {}: GPU time per "
                                "pass in µs{}\n\n",
                                r.workload, r.batch, r.framework, r.model, r.precision,
                                r.casts ? " (weight casts included, also shown apart)" : "");
  size_t name_width = std::string("layer").size();
  for (const LayerTimes& row : r.layers) name_width = std::max(name_width, row.name.size());
  const std::string casts_header = r.casts ? fmt::format(" {:>15}", "casts f/bd/bw") : "";
  out += fmt::format("{:<{}} {:<13} {:<9} {:>11} {:>11} {:>11}{}  {}\n", "layer", name_width,
                     "type", "precision", "forward", "bwd-data", "bwd-weights", casts_header,
                     "algorithm fwd/bwd-data/bwd-weights");
  for (const LayerTimes& row : r.layers) {
    out += fmt::format("{:<{}} {:<13} {:<9} {:>11} {:>11} {:>11}", row.name, name_width, row.type,
                       precision_cell(row), time_cell(row, TrainingPass::forward),
                       time_cell(row, TrainingPass::backward_data),
                       time_cell(row, TrainingPass::backward_weights));
    if (r.casts) out += fmt::format(" {:>15}", cast_cell(row));
    const std::string algorithms = algorithms_of(row);
    out += (algorithms.empty() ? "" : "  " + algorithms) + "\n";
  }
  out += fmt::format("{:<{}} {:<13} {:<9} {:>11.1f} {:>11.1f} {:>11.1f}\n", "TOTAL", name_width,
                     "", "", total_of(r, TrainingPass::forward),
                     total_of(r, TrainingPass::backward_data),
                     total_of(r, TrainingPass::backward_weights));
  // The figure docs/compute-model.md tabulates per model ("Whole models").
  out += fmt::format("\nall passes: {:.3f} ms (no weight updates, no gradient exchange)\n",
                     std::accumulate(r.total_us.begin(), r.total_us.end(), 0.0) / 1e3);
  return out;
}

// Long format, one row per (layer, pass the layer has), as scripts read it; the totals are the
// last rows, layer TOTAL with an empty type. Non-convolution passes leave the algorithm and the
// workspace empty.
std::string layer_times_csv(const LayerTimesReport& r) {
  std::string out = "layer,type,pass,precision,time_us,cast_us,algorithm,workspace_bytes\n";
  for (const LayerTimes& row : r.layers) {
    for (const sim::LayerPassTime& p : row.passes) {
      out += csv_record({row.name, row.type, to_string(p.pass),
                         compute::to_string(p.plan.precision),
                         fmt::format("{:.9g}", micros(p.plan.time)),
                         fmt::format("{:.9g}", micros(p.plan.cast_time)), p.plan.algorithm,
                         is_conv(p.plan) ? fmt::format("{:.0f}", p.plan.workspace_bytes) : ""});
    }
  }
  for (TrainingPass pass : kPasses) {
    out += fmt::format("TOTAL,,{},,{:.9g},,,\n", to_string(pass), total_of(r, pass));
  }
  return out;
}

nlohmann::ordered_json pass_json(const compute::PassPlan& plan) {
  nlohmann::ordered_json j = {{"precision", compute::to_string(plan.precision)},
                              {"time_us", micros(plan.time)},
                              {"cast_us", micros(plan.cast_time)}};
  if (is_conv(plan)) {
    j["algorithm"] = plan.algorithm;
    j["workspace_bytes"] = plan.workspace_bytes;
  }
  return j;
}

nlohmann::ordered_json layer_times_json(const LayerTimesReport& r) {
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const LayerTimes& row : r.layers) {
    nlohmann::ordered_json passes = nlohmann::ordered_json::object();
    for (const sim::LayerPassTime& p : row.passes) passes[to_string(p.pass)] = pass_json(p.plan);
    layers.push_back({{"name", row.name}, {"type", row.type}, {"passes", std::move(passes)}});
  }
  nlohmann::ordered_json totals = nlohmann::ordered_json::object();
  for (TrainingPass pass : kPasses) totals[to_string(pass)] = total_of(r, pass);
  return {{"workload", r.workload}, {"gpu", r.gpu},       {"framework", r.framework},
          {"precision", r.precision},
          {"batch", r.batch},       {"model", r.model},   {"layers", std::move(layers)},
          {"total_us", std::move(totals)}};
}

void show_layer_times(const LayersOptions& o) {
  const LayerTimesReport report = sim::layer_times_of(o.request);
  // Rendered whole before printing: an error never leaves half an output behind.
  std::string out;
  if (o.format == "json") {
    out = layer_times_json(report).dump(2) + "\n";
  } else if (o.format == "csv") {
    out = layer_times_csv(report);
  } else {
    out = layer_times_table(report);
  }
  std::cout << out;
}

}  // namespace

void add_layer_times_command(CLI::App& workload) {
  auto o = std::make_shared<LayersOptions>();
  auto* cmd = workload.add_subcommand(
      "layers", "Predicted GPU time of each pass of each layer, with the convolution algorithms");
  cmd->add_option("model", o->request.model, "A shipped model name or a .yaml file")->required();
  cmd->add_option("--batch", o->request.batch, "Samples per GPU per iteration")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--gpu", o->request.gpu, "GPU model whose kernel times to predict")
      ->capture_default_str();
  cmd->add_option("--framework", o->request.framework,
                  "Framework constants (workloads/frameworks): its cuDNN autotuning and "
                  "workspace limit pick the convolution algorithms; default: the model's own, "
                  "the one its file names (`framework:`), else mxnet");
  cmd->add_option("--profile", o->request.profile, "Measured per-layer times (docs/compute-model.md)");
  cmd->add_option("--precision", o->request.precision, "Precision recipe, as the framework runs it: fp32, "
                                               "tf32, amp, fp16, bf16 or fp8 (default: the "
                                               "workload's)")
      ->check(CLI::IsMember(wl::precision_recipe_names()));
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->add_option("--set", o->request.overrides,
                  "Override a value of the file: KEY.PATH=VALUE (e.g. args.doublings=1)")
      ->allow_extra_args(false);
  cmd->callback([o] { show_layer_times(*o); });
}

}  // namespace gpuscale::cli
