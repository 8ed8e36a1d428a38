// Loading, predicting and reporting a `kind: layers` suite (layers_suite.hpp). error % = 100
// (predicted - measured) / measured per row and pass; a model's figure is the median |error %|
// over its scored rows and passes, which a few rows the profiler charges oddly cannot move.
#include "validation/src/layers_suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/compute/gpu_spec.hpp"
#include "sim/experiment/layer_times.hpp"
#include "topologies/core/config_reader.hpp"
#include "topologies/core/config_tree.hpp"
#include "topologies/core/csv.hpp"
#include "topologies/core/shipped_files.hpp"
#include "validation/src/comparison.hpp"
#include "validation/src/suite.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/workload_document.hpp"

namespace gpuscale::validation {
namespace {

namespace fs = std::filesystem;
using compute::TrainingPass;

const std::vector<std::string> kLayersSuiteKeys = {"kind",  "name",   "title",    "source",
                                             "data",  "setup",  "models",   "history"};
const std::vector<std::string> kLayersSetupKeys = {"gpu", "framework", "precision", "protocol",
                                             "alternatives"};
const std::vector<std::string> kProtocolKeys = {"modules", "unreported", "host_per_module",
                                                "input_copy_in_first_forward"};
const std::vector<std::string> kModelKeys = {"id", "workload"};
const std::vector<std::string> kReadingKeys = {"id", "gpu", "why"};
const std::vector<std::string> kColumns = {"model",    "batch",  "node",      "module",
                                           "fwd_ms",   "bwd_ms", "act_bytes", "param_bytes"};
// The profiler's byte columns count FP32 elements (the data's README), whatever the suite runs.
constexpr int kFp32Bytes = 4;

double number_field(const std::string& text, const Origin& where, std::string_view column) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0)) {
    throw ConfigError(where, fmt::format("{} '{}' is not a number >= 0", column, text));
  }
  return value;
}

// "MaxPool2d(kernel_size=3, ...)" -> "MaxPool2d".
std::string module_class(const std::string& module) { return module.substr(0, module.find('(')); }

std::vector<ProfiledModule> read_rows(const std::string& path) {
  std::ifstream in(path);
  if (!is_file(path) || !in) {
    throw ConfigError(Origin{path, 0}, "no such file (the suite's `data:`: check the path; data "
                                       "in ../shared lies beside the source tree)");
  }
  std::vector<ProfiledModule> rows;
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    const Origin where{path, number};
    if (line.empty() || line.starts_with('#')) continue;
    const std::vector<std::string> f = split_csv(line);
    if (!header) {
      if (f != kColumns) {
        throw ConfigError(where, fmt::format("the header must be {}", fmt::join(kColumns, ",")));
      }
      header = true;
      continue;
    }
    if (f.size() != kColumns.size()) {
      throw ConfigError(where, fmt::format("{} fields, the header has {}", f.size(),
                                           kColumns.size()));
    }
    ProfiledModule r{.model = f[0], .node = f[2], .module = f[3], .origin = where};
    r.batch = static_cast<int>(number_field(f[1], where, "batch"));
    int index = -1;
    if (r.node.starts_with("node")) {
      const std::string digits = r.node.substr(4);
      std::from_chars(digits.data(), digits.data() + digits.size(), index);
    }
    if (index < 0) throw ConfigError(where, fmt::format("node '{}' is not nodeN", r.node));
    r.node_index = index;
    r.fwd_ms = number_field(f[4], where, "fwd_ms");
    r.bwd_ms = number_field(f[5], where, "bwd_ms");
    r.act_bytes = number_field(f[6], where, "act_bytes");
    r.param_bytes = number_field(f[7], where, "param_bytes");
    rows.push_back(std::move(r));
  }
  if (!header) throw ConfigError(Origin{path, number}, "no header line: the file is empty");
  return rows;
}

// A list whose every item is one of `allowed`.
std::vector<std::string> list_of(const ConfigNode& node, std::string_view what,
                                 const std::vector<std::string>& allowed) {
  if (!node.is_sequence()) throw ConfigError(node.origin(), fmt::format("{} must be a list", what));
  std::vector<std::string> out;
  for (const ConfigNode& item : node.items()) out.push_back(read_one_of(item, what, allowed));
  return out;
}

std::vector<std::string> layer_type_names() {
  std::vector<std::string> names;
  for (int t = 0; t <= static_cast<int>(wl::LayerType::Add); ++t)
    names.emplace_back(wl::to_string(static_cast<wl::LayerType>(t)));
  return names;
}

ProfilerProtocol read_protocol(const ConfigNode& node, const wl::FrameworkConfig& framework) {
  const MapReader map(node, "protocol", kProtocolKeys);
  ProfilerProtocol p;
  const std::vector<std::string> types = layer_type_names();
  const ConfigNode& modules = map.require("modules", "{Conv2d: conv, ReLU: relu}");
  if (!modules.is_map() || modules.entries().empty())
    throw ConfigError(modules.origin(), "modules must map module classes to layer types");
  for (const auto& entry : modules.entries())
    p.modules[entry.key] = read_one_of(entry.value, entry.key, types);
  if (const ConfigNode* n = map.find("unreported")) p.unreported = list_of(*n, "unreported", types);
  if (const ConfigNode* n = map.find("host_per_module")) {
    std::vector<std::string> names;
    for (const wl::HostCost* cost : framework.host.all()) names.push_back(cost->name);
    p.host_per_module = list_of(*n, "host_per_module", names);
  }
  if (const ConfigNode* n = map.find("input_copy_in_first_forward"))
    p.input_copy_in_first_forward = read_bool(*n, "input_copy_in_first_forward");
  return p;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool is_timed(const ProfilerProtocol& p, const std::string& type) {
  return std::any_of(p.modules.begin(), p.modules.end(),
                     [&](const auto& m) { return m.second == type; });
}

// A model's rows in forward creation order.
std::vector<const ProfiledModule*> rows_of(const LayersSuite& s, const std::string& model) {
  std::vector<const ProfiledModule*> rows;
  for (const ProfiledModule& r : s.rows) {
    if (r.model == model) rows.push_back(&r);
  }
  std::sort(rows.begin(), rows.end(), [](const ProfiledModule* a, const ProfiledModule* b) {
    return a->node_index < b->node_index;
  });
  return rows;
}

// The indices (into report.layers) of the timed layers, in forward order.
std::vector<size_t> timed_layers(const ProfilerProtocol& p, const sim::LayerTimesReport& report) {
  std::vector<size_t> timed;
  for (size_t i = 0; i < report.layers.size(); ++i) {
    if (is_timed(p, report.layers[i].type)) timed.push_back(i);
  }
  return timed;
}

// Rows and timed layers paired one to one: the same count, and per pair the type the protocol
// maps the module to, the output bytes and the parameter bytes.
void check_pairing(const LayersSuite& s, const LayersModel& m,
                   const std::vector<const ProfiledModule*>& rows,
                   const sim::LayerTimesReport& report) {
  const std::vector<size_t> timed = timed_layers(s.protocol, report);
  for (size_t k = 0; k < std::max(rows.size(), timed.size()); ++k) {
    if (k >= rows.size() || k >= timed.size()) {
      throw ConfigError(m.origin,
                        fmt::format("model '{}': the data has {} timed modules, workload '{}' {} "
                                    "layers of the protocol's types; the first unpaired is {}",
                                    m.id, rows.size(), m.workload, timed.size(),
                                    k < rows.size() ? rows[k]->node + " " + rows[k]->module
                                                    : report.layers[timed[k]].name));
    }
    const ProfiledModule& row = *rows[k];
    const sim::LayerTimes& layer = report.layers[timed[k]];
    const auto mapped = s.protocol.modules.find(module_class(row.module));
    std::string slip;
    if (mapped == s.protocol.modules.end()) {
      slip = fmt::format("module class '{}' is not in the protocol's modules",
                         module_class(row.module));
    } else if (mapped->second != layer.type) {
      slip = fmt::format("it is a {}, the layer a {}", mapped->second, layer.type);
    } else if (row.act_bytes != static_cast<double>(layer.output_elements) * m.batch * kFp32Bytes) {
      slip = fmt::format("it outputs {:.0f} bytes, the layer {} per sample x {} x {} B",
                         row.act_bytes, layer.output_elements, m.batch, kFp32Bytes);
    } else if (row.param_bytes != static_cast<double>(layer.params) * kFp32Bytes) {
      slip = fmt::format("it holds {:.0f} parameter bytes, the layer {} parameters x {} B",
                         row.param_bytes, layer.params, kFp32Bytes);
    }
    if (!slip.empty()) {
      throw ConfigError(row.origin,
                        fmt::format("{} {} pairs with layer '{}' of workload '{}', but {} (the "
                                    "workload must list the model's modules in forward order)",
                                    row.node, row.module, layer.name, m.workload, slip));
    }
  }
}

double pass_ms(const sim::LayerTimes& layer, ProfiledPass pass) {
  double us = 0;
  const std::vector<TrainingPass> passes =
      pass == ProfiledPass::forward
          ? std::vector<TrainingPass>{TrainingPass::forward}
          : std::vector<TrainingPass>{TrainingPass::backward_data, TrainingPass::backward_weights};
  for (TrainingPass p : passes) {
    if (const compute::PassPlan* plan = layer.plan_of(p)) us += plan->time.value * 1e6;
  }
  return us / 1e3;
}

double host_ms_of(const ProfilerProtocol& p, const wl::FrameworkConfig& framework) {
  double s = 0;
  for (const wl::HostCost* cost : framework.host.all()) {
    if (contains(p.host_per_module, cost->name)) s += cost->value.value;
  }
  return s * 1e3;
}

std::optional<double> median_abs(std::vector<double> errors) {
  if (errors.empty()) return std::nullopt;
  for (double& e : errors) e = std::abs(e);
  std::sort(errors.begin(), errors.end());
  const size_t n = errors.size();
  return n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
}

// One pass of a model: walk the layers in the pass's order, charging every untimed layer's time
// to the next timed layer of that order (layers_suite.hpp).
void predict_pass(const LayersSuite& s, const sim::LayerTimesReport& report, ProfiledPass pass,
                  double host_ms, std::vector<ModuleTime>& times) {
  const std::vector<size_t> timed = timed_layers(s.protocol, report);
  std::vector<size_t> order(report.layers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (pass == ProfiledPass::backward) std::reverse(order.begin(), order.end());
  double pending_ms = 0;
  std::string pending_names;
  for (size_t i : order) {
    const sim::LayerTimes& layer = report.layers[i];
    if (contains(s.protocol.unreported, layer.type)) continue;
    if (!is_timed(s.protocol, layer.type)) {
      pending_ms += pass_ms(layer, pass);
      pending_names += "+" + layer.name;
      continue;
    }
    const size_t k = static_cast<size_t>(std::find(timed.begin(), timed.end(), i) - timed.begin());
    ModuleTime& t = times[k];
    t.layers = layer.name + pending_names;
    t.own_ms = pass_ms(layer, pass);
    t.charged_ms = pending_ms;
    t.host_ms = host_ms;
    pending_ms = 0;
    pending_names.clear();
  }
}

sim::LayerTimesRequest request_of(const LayersSuite& s, const LayersModel& m,
                                  const std::string& gpu) {
  return {.model = m.workload, .batch = m.batch, .framework = s.framework, .gpu = gpu,
          .precision = s.precision};
}

ModelComparison compare_model(const LayersSuite& s, const LayersModel& m, const std::string& gpu,
                              const wl::FrameworkConfig& framework) {
  const std::vector<const ProfiledModule*> rows = rows_of(s, m.id);
  const sim::LayerTimesReport report = sim::layer_times_of(request_of(s, m, gpu));
  const double host_ms = host_ms_of(s.protocol, framework);
  ModelComparison c{.id = m.id};
  std::vector<double> errors;
  for (ProfiledPass pass : {ProfiledPass::forward, ProfiledPass::backward}) {
    std::vector<ModuleTime> times(rows.size());
    predict_pass(s, report, pass, host_ms, times);
    for (size_t k = 0; k < rows.size(); ++k) {
      ModuleTime& t = times[k];
      t.row = rows[k];
      t.pass = pass;
      t.measured_ms = pass == ProfiledPass::forward ? rows[k]->fwd_ms : rows[k]->bwd_ms;
      if (k == 0 && pass == ProfiledPass::forward && s.protocol.input_copy_in_first_forward) {
        t.not_scored = "waits for the input batch's host-to-device copy";
      } else if (t.measured_ms == 0) {
        t.not_scored = "measured 0";
      } else {
        t.error_pct = error_pct(t.measured_ms, t.predicted_ms());
        errors.push_back(*t.error_pct);
        c.measured_ms[static_cast<size_t>(pass)] += t.measured_ms;
        c.predicted_ms[static_cast<size_t>(pass)] += t.predicted_ms();
      }
      c.times.push_back(std::move(t));
    }
  }
  c.median_abs_error_pct = median_abs(errors);
  return c;
}

std::string total_cell(const ModelComparison& m, ProfiledPass pass) {
  const auto p = static_cast<size_t>(pass);
  if (m.measured_ms[p] == 0) return "-";
  return fmt::format("{:.1f}/{:.1f} ({:+.0f}%)", m.measured_ms[p], m.predicted_ms[p],
                     error_pct(m.measured_ms[p], m.predicted_ms[p]));
}

std::string percent(const std::optional<double>& v) {
  return v ? fmt::format("{:.1f}", *v) : std::string("-");
}

}  // namespace

const char* to_string(ProfiledPass pass) {
  return pass == ProfiledPass::forward ? "forward" : "backward";
}

LayersSuite load_layers_suite(const std::string& name_or_path) {
  const std::string path = suite_yaml(name_or_path);
  const ConfigNode doc = ConfigNode::load_file(path);
  const MapReader map(doc, "suite", kLayersSuiteKeys);
  read_one_of(map.require("kind", "layers"), "kind", {"layers"});
  LayersSuite s;
  s.name = map.name("name", "pipedream-v100");
  s.title = map.string("title", "\"...\"");
  if (const ConfigNode* n = map.find("source")) read_string(*n, "source");
  const fs::path folder = fs::path(path).parent_path();
  s.data_file = (folder / map.string("data", "../../../shared/data/pipedream-v100/layers.csv"))
                    .lexically_normal()
                    .string();
  const MapReader setup(map.require("setup", "{gpu: V100-SXM2, framework: pytorch-ddp}"), "setup",
                        kLayersSetupKeys);
  s.gpu = setup.string("gpu", "V100-SXM2");
  compute::load_gpu_spec(s.gpu, setup.require("gpu", "").origin());
  s.framework = setup.string("framework", "pytorch-ddp");
  const wl::FrameworkConfig framework =
      wl::load_framework(s.framework, setup.require("framework", "").origin());
  if (const ConfigNode* n = setup.find("precision")) {
    s.precision = read_string(*n, "precision");
    wl::check_precision_recipe_name(s.precision, n->origin());
  }
  s.protocol = read_protocol(setup.require("protocol", "{modules: {Conv2d: conv}}"), framework);
  if (const ConfigNode* alternatives = setup.find("alternatives")) {
    for (const ConfigNode& item : alternatives->items()) {
      const MapReader r(item, "alternative", kReadingKeys);
      LayersReading reading{.id = r.name("id", "v100-pcie"), .gpu = r.string("gpu", "V100-PCIe"),
                            .why = r.string("why", "\"...\"")};
      compute::load_gpu_spec(reading.gpu, r.require("gpu", "").origin());
      s.readings.push_back(std::move(reading));
    }
  }
  s.rows = read_rows(s.data_file);
  const ConfigNode& models = map.require("models", "[{id: resnet50, workload: resnet-50}]");
  if (!models.is_sequence() || models.items().empty())
    throw ConfigError(models.origin(), "models must list at least one model");
  std::vector<std::string> ids;
  for (const ConfigNode& item : models.items()) {
    const MapReader m(item, "model", kModelKeys);
    LayersModel model{.id = m.string("id", "resnet50"), .origin = item.origin()};
    const std::string workload = m.string("workload", "resnet-50");
    const std::string file = wl::shipped_workloads().resolve(workload, folder.string(),
                                                             m.require("workload", "").origin());
    model.workload =
        workload.find('/') != std::string::npos || workload.ends_with(".yaml") ? file : workload;
    if (contains(ids, model.id))
      throw ConfigError(item.origin(), fmt::format("model '{}' is listed twice", model.id));
    const std::vector<const ProfiledModule*> rows = rows_of(s, model.id);
    if (rows.empty()) {
      throw ConfigError(item.origin(), fmt::format("the data ({}) has no row of model '{}'",
                                                   s.data_file, model.id));
    }
    model.batch = rows.front()->batch;
    for (const ProfiledModule* r : rows) {
      if (r->batch != model.batch)
        throw ConfigError(r->origin, fmt::format("batch {} where model '{}' was profiled at {}",
                                                 r->batch, model.id, model.batch));
    }
    check_pairing(s, model, rows, sim::layer_times_of(request_of(s, model, s.gpu)));
    ids.push_back(model.id);
    s.models.push_back(std::move(model));
  }
  ids.emplace_back("overall");
  s.history = read_suite_history(map.find("history"), ids);
  return s;
}

LayersComparison compare_layers_suite(const LayersSuite& suite, const std::string& gpu) {
  LayersComparison c{.gpu = gpu.empty() ? suite.gpu : gpu};
  const wl::FrameworkConfig framework = wl::load_framework(suite.framework);
  std::vector<double> all;
  for (const LayersModel& m : suite.models) {
    c.models.push_back(compare_model(suite, m, c.gpu, framework));
    c.median_pct[m.id] = c.models.back().median_abs_error_pct;
    for (const ModuleTime& t : c.models.back().times) {
      if (t.error_pct) all.push_back(*t.error_pct);
    }
  }
  c.median_pct["overall"] = median_abs(all);
  return c;
}

std::string layers_comparison_table(const LayersSuite& suite, const LayersComparison& c,
                                    const std::vector<LayersComparison>& readings) {
  const wl::FrameworkConfig framework = wl::load_framework(suite.framework);
  std::string out = fmt::format("Validation suite {}: {}\n", suite.name, suite.title);
  out += fmt::format("GPU {}, framework {} (its convolution choices and host costs), precision "
                     "{}; data {}\n",
                     c.gpu, suite.framework, suite.precision.empty() ? "-" : suite.precision,
                     suite.data_file);
  std::vector<std::string> modules;
  for (const auto& [cls, type] : suite.protocol.modules) modules.push_back(cls + "=" + type);
  out += fmt::format("protocol: rows are modules {}; a layer of another type is charged to the "
                     "next timed module of its pass{}; host per module and pass: {} = {:.1f} "
                     "µs{}\n",
                     fmt::join(modules, " "),
                     suite.protocol.unreported.empty()
                         ? ""
                         : fmt::format(" ({} wrapped but not in the data)",
                                       fmt::join(suite.protocol.unreported, ", ")),
                     suite.protocol.host_per_module.empty()
                         ? "none"
                         : fmt::format("{}", fmt::join(suite.protocol.host_per_module, " + ")),
                     host_ms_of(suite.protocol, framework) * 1e3,
                     suite.protocol.input_copy_in_first_forward
                         ? "; the first module's forward is not scored (it waits for the input "
                           "copy)"
                         : "");
  out += "error % = 100 x (predicted - measured) / measured per module and pass; per model the "
         "median |error %|; gpuscale fits nothing on this suite\n\n";
  out += fmt::format("  {:<14} {:<26} {:>5} {:>5} {:>11} {:>10}  {:<24} {:<24}\n", "model",
                     "workload", "batch", "rows", "median |e|%", "first look",
                     "forward ms meas/pred", "backward ms meas/pred");
  for (size_t i = 0; i < suite.models.size(); ++i) {
    const LayersModel& m = suite.models[i];
    const ModelComparison& mc = c.models[i];
    out += fmt::format("  {:<14} {:<26} {:>5} {:>5} {:>11} {:>10}  {:<24} {:<24}\n", m.id,
                       m.workload, m.batch, mc.times.size() / 2, percent(mc.median_abs_error_pct),
                       first_look_cell(suite.history, m.id), total_cell(mc, ProfiledPass::forward),
                       total_cell(mc, ProfiledPass::backward));
  }
  out += fmt::format("  {:<14} {:<26} {:>5} {:>5} {:>11} {:>10}\n", "overall", "", "", "",
                     percent(c.median_pct.at("overall")),
                     first_look_cell(suite.history, "overall"));
  out += "\nLargest errors per model (module, pass: measured / predicted ms = own + charged + "
         "host)\n";
  for (const ModelComparison& mc : c.models) {
    std::vector<const ModuleTime*> scored;
    for (const ModuleTime& t : mc.times) {
      if (t.error_pct) scored.push_back(&t);
    }
    std::sort(scored.begin(), scored.end(), [](const ModuleTime* a, const ModuleTime* b) {
      return std::abs(*a->error_pct) > std::abs(*b->error_pct);
    });
    scored.resize(std::min<size_t>(scored.size(), 3));
    for (const ModuleTime* t : scored) {
      out += fmt::format("  {:<14} {:<8} {:<34.34} {:<8} {:>8.3f} / {:>8.3f} = {:.3f} + {:.3f} + "
                         "{:.3f}  {:+.0f}%  ({})\n",
                         mc.id, t->row->node, t->row->module, to_string(t->pass), t->measured_ms,
                         t->predicted_ms(), t->own_ms, t->charged_ms, t->host_ms, *t->error_pct,
                         t->layers);
    }
  }
  for (size_t r = 0; r < readings.size(); ++r) {
    const LayersReading& reading = suite.readings[r];
    std::vector<std::string> cells;
    for (const LayersModel& m : suite.models)
      cells.push_back(fmt::format("{} {}", m.id, percent(readings[r].median_pct.at(m.id))));
    out += fmt::format("\nreading {} (GPU {}): median |error %| {}; overall {}\n  why: {}\n",
                       reading.id, reading.gpu, fmt::join(cells, ", "),
                       percent(readings[r].median_pct.at("overall")), reading.why);
  }
  return out + history_summary(suite.history);
}

std::string layers_comparison_json(const LayersSuite& suite, const LayersComparison& c,
                                   const std::vector<LayersComparison>& readings) {
  using nlohmann::ordered_json;
  auto opt = [](const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(); };
  ordered_json models = ordered_json::array();
  for (size_t i = 0; i < suite.models.size(); ++i) {
    const ModelComparison& mc = c.models[i];
    ordered_json rows = ordered_json::array();
    for (const ModuleTime& t : mc.times) {
      ordered_json j = {{"node", t.row->node},         {"module", t.row->module},
                        {"pass", to_string(t.pass)},   {"layers", t.layers},
                        {"measured_ms", t.measured_ms}, {"predicted_ms", t.predicted_ms()},
                        {"own_ms", t.own_ms},          {"charged_ms", t.charged_ms},
                        {"host_ms", t.host_ms},        {"error_pct", opt(t.error_pct)}};
      if (!t.not_scored.empty()) j["not_scored"] = t.not_scored;
      rows.push_back(std::move(j));
    }
    models.push_back({{"id", mc.id},
                      {"workload", suite.models[i].workload},
                      {"batch", suite.models[i].batch},
                      {"median_abs_error_pct", opt(mc.median_abs_error_pct)},
                      {"rows", std::move(rows)}});
  }
  ordered_json medians = ordered_json::object();
  for (const auto& [id, value] : c.median_pct) medians[id] = opt(value);
  ordered_json alternative = ordered_json::array();
  for (size_t r = 0; r < readings.size(); ++r) {
    ordered_json m = ordered_json::object();
    for (const auto& [id, value] : readings[r].median_pct) m[id] = opt(value);
    alternative.push_back({{"id", suite.readings[r].id},
                           {"gpu", suite.readings[r].gpu},
                           {"why", suite.readings[r].why},
                           {"median_abs_error_pct", std::move(m)}});
  }
  return ordered_json{{"suite", suite.name},
                      {"title", suite.title},
                      {"gpu", c.gpu},
                      {"framework", suite.framework},
                      {"precision", suite.precision},
                      {"data", suite.data_file},
                      {"calibration_points", 0},
                      {"models", std::move(models)},
                      {"median_abs_error_pct", std::move(medians)},
                      {"readings", std::move(alternative)},
                      {"history", history_json(suite.history)}}
             .dump(2) +
         "\n";
}

}  // namespace gpuscale::validation
