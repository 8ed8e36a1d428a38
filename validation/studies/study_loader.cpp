#include "validation/studies/study_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "sim/exchange/exchange_choice.hpp"
#include "sim/experiment/experiment_file.hpp"
#include "sim/experiment/machine_setup.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/core/config_reader.hpp"
#include "topologies/core/shipped_files.hpp"
#include "topologies/src/topology_config.hpp"
#include "topologies/src/topology_loader.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/workload_document.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::sweep {
namespace {

namespace fs = std::filesystem;

// One value of one axis: how it reads in a table, and what it changes in a run.
struct Setting {
  std::string axis;
  std::string text;
  std::function<void(Run&)> apply;
};

std::string stem_of(const std::string& name_or_path) { return fs::path(name_or_path).stem().string(); }

Machine read_machine(const ConfigNode& node, const std::string& folder) {
  if (node.is_scalar()) {
    // Found now, or the error names this line; then loaded, so a broken file fails before any run.
    const std::string topology =
        topo::shipped_topologies().resolve(read_string(node, "machine"), folder, node.origin());
    topo::load_topology_config(topology);
    return {stem_of(topology), topology, {}, nullptr, {}};
  }
  if (!node.is_map()) {
    throw ConfigError(node.origin(), "a machine is a name, a .yaml file, {name, topology, set} or "
                                     "an inline machine {name, base, ...}");
  }
  if (node.find("topology") != nullptr) {
    const MapReader map(node, "machine", {"name", "topology", "set"});
    Machine m;
    m.label = map.name("name", "dgx1-fast");
    const std::string topology = map.string("topology", "dgx1-v100");
    topo::shipped_topologies().resolve(topology, folder, map.require("topology", "").origin());
    m.topology = file_or_name(topology, folder);
    std::vector<Override> written;  // each reported at its line if the machine refuses it
    if (const ConfigNode* set = map.find("set")) {
      for (const ConfigNode* item : items_or_one(*set, "set")) {
        m.overrides.push_back(read_string(*item, "a machine override (KEY.PATH=VALUE)"));
        written.push_back({m.overrides.back(), item->origin()});
      }
    }
    topo::load_topology_config_with(m.topology, written);
    return m;
  }
  // An inline machine: a topology document of its own, named by its `name:`.
  const ConfigNode* name = node.find("name");
  if (name == nullptr) {
    throw ConfigError(node.origin(), "an inline machine needs a 'name:' (and usually 'base:')");
  }
  auto document = std::make_shared<const ConfigNode>(topo::resolve_base(node, folder));
  const std::string label = read_name(*name, "machine name");
  topo::load_topology_config(*document, label);
  return {label, label, {}, document, node.origin().str()};
}

Setting read_setting(const std::string& axis, const ConfigNode& node, const std::string& folder) {
  if (axis == "machine") {
    Machine m = read_machine(node, folder);
    std::string text = m.label;
    return {axis, text, [m](Run& r) { r.machine = m; }};
  }
  if (axis == "workload") {
    const std::string name = read_string(node, "workload");
    const std::string w = file_or_name(name, folder);
    wl::shipped_workloads().resolve(w, "", node.origin());  // an unknown model fails at this line
    wl::load_workload(w);  // a broken one fails before anything runs, at its own line
    return {axis, name, [w](Run& r) { r.config.workload = w; }};
  }
  if (axis == "gpus" || axis == "batch") {
    const int n = static_cast<int>(read_integer(node, axis, 1, axis == "gpus" ? 1 << 16 : 1 << 20));
    if (axis == "gpus") {
      return {axis, std::to_string(n), [n, at = node.origin()](Run& r) {
                r.config.gpus = n;
                r.experiment.gpus_written_at = {at};
              }};
    }
    return {axis, std::to_string(n), [n](Run& r) { r.config.batch = n; }};
  }
  if (axis == "comm") {
    const std::string c = read_string(node, "comm method");
    sim::check_exchange_name(c, node.origin());
    return {axis, c, [c, at = node.origin()](Run& r) {
              r.config.comm = c;
              r.experiment.comms_written_at = {at};
            }};
  }
  if (axis == "routing") {
    const std::string m = read_one_of(node, "routing", topo::routing_mode_names());
    return {axis, m, [m](Run& r) { r.experiment.routing = m; }};
  }
  if (axis == "protocol") {
    const std::string p = read_one_of(node, "protocol", sim::protocol_choice_names());
    return {axis, p, [p](Run& r) { r.experiment.protocol = p; }};
  }
  if (axis == "decode_threads") {
    const int n = static_cast<int>(read_integer(node, axis, 1, 1024));
    return {axis, std::to_string(n), [n](Run& r) { r.experiment.decode_threads = n; }};
  }
  if (axis == "precision") {
    const std::string p = read_string(node, "precision");
    wl::check_precision_recipe_name(p, node.origin());
    return {axis, p, [p, at = node.origin()](Run& r) {
              r.experiment.precision = p;
              r.experiment.precision_written_at = at;
            }};
  }
  if (axis == "spatial") {
    const int n = static_cast<int>(read_integer(node, axis, 1, 1024));
    return {axis, std::to_string(n), [n](Run& r) { r.experiment.spatial = n; }};
  }
  const double mb = read_number(node, "fusion_mb", 0, 1e6);  // fusion_mb
  return {axis, fmt::format("{:g}", mb), [mb](Run& r) { r.experiment.fusion_mb = mb; }};
}

std::vector<Setting> read_axis(const std::string& axis, const ConfigNode& node,
                               const std::string& folder) {
  std::vector<Setting> settings;
  std::set<std::string> seen;
  for (const ConfigNode* item : items_or_one(node, axis)) {
    settings.push_back(read_setting(axis, *item, folder));
    if (!seen.insert(settings.back().text).second) {
      throw ConfigError(item->origin(), fmt::format("'{}' is listed twice under '{}'",
                                                    settings.back().text, axis));
    }
  }
  return settings;
}

// The base run: the experiment under `base:`, each list-valued key holding one value.
Run read_base(const ConfigNode* base, const std::string& folder) {
  Run run;
  run.experiment = base != nullptr ? sim::read_experiment(*base, folder) : sim::Experiment{};
  run.experiment.record_link_uses = true;  // the study's links-*.svg
  for (const char* key : {"workload", "gpus", "batch", "comm"}) {
    const ConfigNode* n = base != nullptr ? base->find(key) : nullptr;
    if (n != nullptr && n->is_sequence() && n->items().size() > 1) {
      throw ConfigError(n->origin(), fmt::format("'{}' under base holds several values: list them "
                                                 "under axes (or runs) instead", key));
    }
  }
  const sim::Experiment& e = run.experiment;
  // read_experiment looked up what the base names; its machine is loaded too, so that a broken
  // file fails before anything runs.
  if (base != nullptr && base->find("topology") != nullptr) {
    topo::load_topology_config(e.topology, e.topology_overrides);
  }
  run.machine = {stem_of(e.topology), e.topology, e.topology_overrides, nullptr, {}};
  run.config = {e.workloads.front(), e.comms.front(), e.batches.front(), e.gpus.front()};
  return run;
}

// Keeps the experiment's own fields in step with the run's configuration, so that either reads
// the same (the replay reads the experiment's machine, the tables the run's).
void settle(Run& run) {
  sim::Experiment& e = run.experiment;
  e.topology = run.machine.topology;
  e.topology_overrides = run.machine.overrides;
  e.topology_document = run.machine.document;
  e.workloads = {run.config.workload};
  e.comms = {run.config.comm};
  e.batches = {run.config.batch};
  e.gpus = {run.config.gpus};
}

// Each key an experiment needs must be named for every run: the defaults of `gpuscale run` are a
// convenience on the command line, not something a study should lean on unawares.
void require_named(const ConfigNode* base, const std::vector<std::vector<Setting>>& per_run,
                   const Origin& where) {
  for (const auto& settings : per_run) {
    for (const char* key : {"workload", "gpus", "comm"}) {
      const bool in_base = base != nullptr && base->find(key) != nullptr;
      const bool in_run = std::any_of(settings.begin(), settings.end(),
                                      [&](const Setting& s) { return s.axis == key; });
      if (!in_base && !in_run) {
        throw ConfigError(where, fmt::format("a run of the study names no '{}': give it under base "
                                             "or in every run", key));
      }
    }
  }
}

std::vector<std::string> varied_axes(const std::vector<std::vector<Setting>>& per_run) {
  std::vector<std::string> axes;
  for (const std::string& axis : axis_names()) {
    std::set<std::string> values;
    for (const auto& settings : per_run) {
      for (const Setting& s : settings) {
        if (s.axis == axis) values.insert(s.text);
      }
    }
    if (values.size() > 1) axes.push_back(axis);
  }
  return axes;
}

std::vector<std::vector<Setting>> cross_product(const ConfigNode& axes, const std::string& folder) {
  const MapReader map(axes, "axes", axis_names());
  std::vector<std::vector<Setting>> combos = {{}};
  for (const auto& entry : axes.entries()) {
    const std::vector<Setting> values = read_axis(entry.key, entry.value, folder);
    std::vector<std::vector<Setting>> next;
    for (const auto& combo : combos) {
      for (const Setting& value : values) {
        next.push_back(combo);
        next.back().push_back(value);
      }
    }
    combos = std::move(next);
  }
  return combos;
}

std::vector<std::vector<Setting>> explicit_runs(const ConfigNode& runs, const std::string& folder) {
  if (!runs.is_sequence() || runs.items().empty()) {
    throw ConfigError(runs.origin(), "'runs' must be a list of runs, e.g. [{gpus: 8, comm: p2p}]");
  }
  std::vector<std::vector<Setting>> list;
  for (const ConfigNode& run : runs.items()) {
    const MapReader map(run, "run", axis_names());
    std::vector<Setting> settings;
    for (const auto& entry : run.entries()) settings.push_back(read_setting(entry.key, entry.value, folder));
    list.push_back(std::move(settings));
  }
  return list;
}

}  // namespace

const std::vector<std::string>& axis_names() {
  static const std::vector<std::string> names = {
      "machine", "workload", "precision", "comm",  "routing", "fusion_mb",
      "protocol", "decode_threads", "spatial", "batch", "gpus"};
  return names;
}

Study load_study_file(const std::string& path) {
  const ConfigNode root = ConfigNode::load_file(path);
  const std::string folder = fs::path(path).parent_path().string();
  const MapReader map(root, "study", {"name", "description", "base", "axes", "runs"});
  Study study;
  study.file = path;
  study.name = map.name("name", "nvlink-matters", NameUse::file);  // the folder sweep-NAME
  if (auto d = map.optional_string("description")) study.description = *d;
  const ConfigNode* axes = map.find("axes");
  const ConfigNode* runs = map.find("runs");
  if (axes == nullptr && runs == nullptr) {
    throw ConfigError(root.origin(), "a study needs 'axes:' (a cross product) or 'runs:' (a list "
                                     "of runs)");
  }
  if (axes != nullptr && runs != nullptr) {
    throw ConfigError(root.origin(), "a study needs either 'axes:' (a cross product) or 'runs:' "
                                     "(a list), not both");
  }
  const ConfigNode* base = map.find("base");
  const Run base_run = read_base(base, folder);
  const auto per_run = axes != nullptr ? cross_product(*axes, folder) : explicit_runs(*runs, folder);
  require_named(base, per_run, (axes != nullptr ? axes : runs)->origin());
  study.axes = varied_axes(per_run);
  std::set<std::tuple<std::string, int, int>> checked;  // machine label, GPUs, spatial ways
  std::map<std::string, wl::FrameworkConfig> frameworks;
  std::map<std::string, std::string> own_precision;  // per workload: its file's recipe
  for (const auto& settings : per_run) {
    Run run = base_run;
    for (const Setting& s : settings) s.apply(run);
    settle(run);
    // A run that names no framework runs under its workload's (sim::framework_name_for), named
    // here so that the run's hash and outputs say which.
    run.experiment.framework = sim::framework_name_for(run.experiment, run.config.workload);
    // The exchange under the name its framework prints it by; a method the framework lacks
    // fails at the line that names it.
    const std::string& name = run.experiment.framework;
    if (!frameworks.contains(name)) frameworks.emplace(name, sim::framework_of(run.experiment));
    run.config.comm = sim::exchanges_of(run.experiment, frameworks.at(name)).front().name;
    settle(run);
    // So does a precision recipe the framework lacks.
    if (!run.experiment.precision.empty()) {
      wl::find_precision_recipe(frameworks.at(name).precision_recipes, run.experiment.precision,
                                name, run.experiment.precision_written_at);
      run.precision = run.experiment.precision;
    } else {
      const std::string& workload = run.config.workload;
      if (!own_precision.contains(workload)) {
        own_precision.emplace(workload, wl::load_workload(workload).recipe);
      }
      run.precision = own_precision.at(workload);
    }
    // Before anything is simulated: a GPU count the machine cannot hold fails at its line, and
    // a machine that cannot be built (a port over-used, a device not connected) at the line
    // that breaks it, with no output folder made.
    if (checked.insert({run.machine.label, run.config.gpus, run.experiment.spatial}).second) {
      const sim::Experiment& e = run.experiment;
      sim::check_gpu_counts(e);
      sim::machine_for(e.topology, e.topology_overrides, run.config.gpus, e.topology_document);
    }
    study.runs.push_back(std::move(run));
  }
  return study;
}

void set_study_precision(Study& study, const std::string& recipe, const Origin& at) {
  wl::check_precision_recipe_name(recipe, at);
  if (std::find(study.axes.begin(), study.axes.end(), "precision") != study.axes.end()) {
    throw ConfigError(at, fmt::format("study {} varies the precision itself (its 'precision' "
                                      "axis): drop --precision, or the axis",
                                      study.name));
  }
  std::map<std::string, wl::FrameworkConfig> frameworks;
  for (Run& run : study.runs) {
    const std::string& name = run.experiment.framework;
    if (!frameworks.contains(name)) frameworks.emplace(name, sim::framework_of(run.experiment));
    wl::find_precision_recipe(frameworks.at(name).precision_recipes, recipe, name, at);
    run.experiment.precision = recipe;
    run.experiment.precision_written_at = at;
    run.precision = recipe;
  }
}

}  // namespace gpuscale::sweep
