// Loading, predicting and reporting a `kind: train` suite (train_suite.hpp): strict reading of
// suite.yaml and its tables, one `gpuscale train` job per point, the error and MAPE arithmetic of
// comparison.hpp (error % = 100 (predicted - measured) / measured; MAPE = mean |error %| over a
// table's simulated points; overall over every table's).
#include "validation/src/train_suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "sim/parallel/train_job.hpp"
#include "sim/parallel/transformer_shape.hpp"
#include "topologies/core/config_reader.hpp"
#include "topologies/core/config_tree.hpp"
#include "topologies/src/topology_document.hpp"
#include "validation/src/comparison.hpp"
#include "validation/src/suite.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/workload_document.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::validation {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTrainSuiteKeys = {"kind",  "name",   "title",  "source",
                                             "setup", "tables", "history"};
const std::vector<std::string> kTrainSetupKeys = {"topology"};
const std::vector<std::string> kTrainTableKeys = {"id",     "title",          "source", "metric",
                                             "interpretation", "precision", "points"};
const std::vector<std::string> kTrainPointKeys = {"id",           "workload",     "tp",
                                             "pp",           "dp",           "gpus",
                                             "micro_batch",  "global_batch", "recompute",
                                             "sequence_parallel", "zero1", "measured", "row",
                                             "note",         "skip"};
const std::vector<std::pair<const char*, TrainMetric>> kTrainMetrics = {
    {"tflops_per_gpu", TrainMetric::TflopsPerGpu},
    {"model_tflops_per_gpu", TrainMetric::ModelTflopsPerGpu},
    {"mfu_pct", TrainMetric::MfuPct},
    {"iteration_s", TrainMetric::IterationS}};

std::vector<std::string> metric_names() {
  std::vector<std::string> names;
  for (const auto& [name, m] : kTrainMetrics) names.emplace_back(name);
  return names;
}

int count(const MapReader& map, std::string_view key, std::string_view example, long max) {
  return static_cast<int>(read_integer(map.require(key, example), key, 1, max));
}

// The row's printed dimensions against the workload's: a transcription or derivation slip shows
// here rather than as an error of the prediction.
void check_dimensions(const TrainPoint& p, const Origin& where) {
  const wl::Workload w = wl::load_workload(p.workload);
  const par::TransformerShape shape = par::transformer_shape(w, wl::compute_costs(w));
  const std::vector<std::pair<const char*, double>> model = {
      {"heads", shape.heads},
      {"hidden", static_cast<double>(shape.hidden)},
      {"layers", shape.layers}};
  for (const auto& [key, value] : model) {
    const auto it = p.row.find(key);
    if (it != p.row.end() && it->second != value) {
      throw ConfigError(where, fmt::format("point '{}': the row's {} is {} but workload '{}' has "
                                           "{} (fix the transcription or the workload)",
                                           p.id, key, it->second, p.workload, value));
    }
  }
}

TrainPoint read_point(const ConfigNode& node, const std::string& folder) {
  const MapReader map(node, "point", kTrainPointKeys);
  TrainPoint p;
  p.origin = node.origin();
  p.id = map.string("id", "\"1.7B\"");
  if (const ConfigNode* n = map.find("skip")) p.skip = read_string(*n, "skip");
  // A point that is not simulated may lack a workload: the row may be one the zoo cannot hold.
  if (p.skip.empty() || map.find("workload") != nullptr) {
    const std::string workload = map.string("workload", "megatron-gpt-1.7b");
    const std::string file =
        wl::shipped_workloads().resolve(workload, folder, map.require("workload", "").origin());
    p.workload = workload.find('/') != std::string::npos || workload.ends_with(".yaml")
                     ? file
                     : workload;
  }
  par::ParallelLayout& l = p.layout;
  l.tp = count(map, "tp", "8", 1 << 10);
  l.pp = count(map, "pp", "8", 1 << 12);
  l.dp = count(map, "dp", "24", 1 << 20);
  l.micro_batch = count(map, "micro_batch", "1", 1 << 16);
  l.global_batch = count(map, "global_batch", "1536", 1 << 24);
  l.recompute = par::recompute_by_name(map.string("recompute", "full"));
  if (const ConfigNode* n = map.find("sequence_parallel"))
    l.sequence_parallel = read_bool(*n, "sequence_parallel");
  if (const ConfigNode* n = map.find("zero1")) l.zero1 = read_bool(*n, "zero1");
  p.gpus = count(map, "gpus", "1536", 1 << 24);
  if (p.gpus != l.gpus()) {
    throw ConfigError(node.origin(), fmt::format("point '{}': gpus {} is not tp x pp x dp = {}",
                                                 p.id, p.gpus, l.gpus()));
  }
  if (l.global_batch % (l.micro_batch * l.dp) != 0) {
    throw ConfigError(node.origin(),
                      fmt::format("point '{}': global_batch {} is not a multiple of micro_batch "
                                  "x dp = {}",
                                  p.id, l.global_batch, l.micro_batch * l.dp));
  }
  p.measured = read_number(map.require("measured", "137"), "measured", 1e-9, 1e12);
  if (const ConfigNode* row = map.find("row")) {
    if (!row->is_map()) throw ConfigError(row->origin(), "row must map column names to numbers");
    for (const auto& entry : row->entries())
      p.row[entry.key] = read_number(entry.value, entry.key, -1e18, 1e18);
  }
  if (const ConfigNode* n = map.find("note")) p.note = read_string(*n, "note");
  if (p.skip.empty()) check_dimensions(p, node.origin());
  return p;
}

TrainTable read_table(const std::string& path) {
  const ConfigNode doc = ConfigNode::load_file(path);
  const MapReader map(doc, "table", kTrainTableKeys);
  TrainTable t;
  t.id = map.name("id", "narayanan-table1");
  t.title = map.string("title", "\"...\"");
  t.source = map.string("source", "\"document, table, rows\"");
  t.metric = [&] {
    const std::string name = read_one_of(map.require("metric", "tflops_per_gpu"), "metric",
                                         metric_names());
    for (const auto& [n, m] : kTrainMetrics) {
      if (name == n) return m;
    }
    throw std::logic_error("validation: unknown train metric");
  }();
  if (const ConfigNode* n = map.find("interpretation"))
    t.interpretation = read_string(*n, "interpretation");
  if (const ConfigNode* n = map.find("precision")) {
    t.precision = read_string(*n, "precision");
    wl::check_precision_recipe_name(t.precision, n->origin());
  }
  const ConfigNode& points = map.require("points", "[{id: ...}]");
  if (!points.is_sequence() || points.items().empty())
    throw ConfigError(points.origin(), "points must be a list of at least one point");
  const std::string folder = fs::path(path).parent_path().string();
  for (const ConfigNode& item : points.items()) {
    t.points.push_back(read_point(item, folder));
    for (size_t i = 0; i + 1 < t.points.size(); ++i) {
      if (t.points[i].id == t.points.back().id)
        throw ConfigError(item.origin(), fmt::format("point id '{}' given twice", t.points[i].id));
    }
  }
  return t;
}

double predicted_value(TrainMetric metric, const par::TrainResult& r, const TrainPoint& p) {
  switch (metric) {
    case TrainMetric::ModelTflopsPerGpu: {
      const wl::Workload w = wl::load_workload(p.workload);
      const par::TransformerShape shape = par::transformer_shape(w, wl::compute_costs(w));
      return par::model_flops_per_iteration(shape, p.layout.global_batch) /
             (r.sim.iteration_s * p.gpus) / 1e12;
    }
    case TrainMetric::TflopsPerGpu: return r.tflops_per_gpu_eq3;
    case TrainMetric::MfuPct: return 100 * r.mfu;
    case TrainMetric::IterationS: return r.sim.iteration_s;
  }
  return 0;
}

std::optional<double> mape_of(const std::vector<const TrainPointResult*>& points) {
  double sum = 0;
  int n = 0;
  for (const TrainPointResult* p : points) {
    if (!p->error_pct) continue;
    sum += std::abs(*p->error_pct);
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

std::string layout_text(const par::ParallelLayout& l) {
  return fmt::format("{}x{}x{}", l.tp, l.pp, l.dp);
}

}  // namespace

const char* to_string(TrainMetric metric) {
  for (const auto& [name, m] : kTrainMetrics) {
    if (m == metric) return name;
  }
  throw std::logic_error("validation: unknown train metric");
}

TrainSuite load_train_suite(const std::string& name_or_path) {
  const std::string path = suite_yaml(name_or_path);
  const ConfigNode doc = ConfigNode::load_file(path);
  const MapReader map(doc, "suite", kTrainSuiteKeys);
  read_one_of(map.require("kind", "train"), "kind", {"train"});
  TrainSuite s;
  s.name = map.name("name", "megatron-a100");
  s.title = map.string("title", "\"...\"");
  if (const ConfigNode* n = map.find("source")) read_string(*n, "source");
  const MapReader setup(map.require("setup", "{topology: dgx-a100-superpod}"), "setup", kTrainSetupKeys);
  s.topology = setup.string("topology", "dgx-a100-superpod");
  topo::shipped_topologies().resolve(s.topology, "", setup.require("topology", "").origin());
  const ConfigNode& tables = map.require("tables", "[narayanan-table1.yaml]");
  if (!tables.is_sequence() || tables.items().empty())
    throw ConfigError(tables.origin(), "tables must list at least one table file");
  const fs::path folder = fs::path(path).parent_path();
  for (const ConfigNode& item : tables.items()) {
    const std::string file = (folder / read_string(item, "table file")).string();
    if (!fs::is_regular_file(file))
      throw ConfigError(item.origin(), fmt::format("no table file '{}'", file));
    s.tables.push_back(read_table(file));
  }
  std::vector<std::string> table_ids;
  for (const TrainTable& table : s.tables) table_ids.push_back(table.id);
  s.history = read_suite_history(map.find("history"), table_ids);
  return s;
}

TrainComparison compare_train_suite(const TrainSuite& suite,
                                    const std::function<void(int, int)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  TrainComparison c;
  int total = 0, done = 0;
  for (const TrainTable& t : suite.tables) total += static_cast<int>(t.points.size());
  for (const TrainTable& t : suite.tables) {
    for (const TrainPoint& p : t.points) {
      TrainPointResult r;
      r.point = p;
      r.table = t.id;
      if (p.skip.empty()) {
        par::TrainJob job;
        job.topology = suite.topology;
        job.workload = p.workload;
        job.precision = t.precision;
        job.layout = p.layout;
        par::TrainResult tr;
        try {
          tr = par::run_train_job(job);
        } catch (const ConfigError& e) {
          throw ConfigError(p.origin, fmt::format("point '{}': {}", p.id, e.what()));
        }
        r.predicted = predicted_value(t.metric, tr, p);
        r.error_pct = error_pct(p.measured, *r.predicted);
        r.iteration_s = tr.sim.iteration_s;
        r.mfu = tr.mfu;
        r.tflops_per_gpu = tr.tflops_per_gpu_eq3;
        r.bubble = tr.sim.bubble;
        r.memory_per_gpu = tr.memory_per_gpu;
        r.fits = tr.fits;
        r.wall_s = tr.wall_s;
      }
      c.points.push_back(std::move(r));
      if (progress) progress(++done, total);
    }
  }
  std::vector<const TrainPointResult*> all;
  for (const TrainTable& t : suite.tables) {
    std::vector<const TrainPointResult*> of_table;
    for (const TrainPointResult& r : c.points) {
      if (r.table == t.id) of_table.push_back(&r);
    }
    c.mape_pct[t.id] = mape_of(of_table);
    all.insert(all.end(), of_table.begin(), of_table.end());
  }
  c.mape_pct["overall"] = mape_of(all);
  c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

std::string train_comparison_table(const TrainSuite& suite, const TrainComparison& c) {
  std::string out = fmt::format("Validation suite {}: {}\n", suite.name, suite.title);
  out += fmt::format("machine {} (nodes as each point's GPUs need); each point one `gpuscale "
                     "train` job\n",
                     suite.topology);
  out += "error % = 100 x (predicted - measured) / measured; MAPE = mean |error %| over the "
         "simulated points; gpuscale fits nothing on this suite: every point is held out\n";
  auto number = [](const std::optional<double>& v, const char* fmt_) {
    return v ? fmt::format(fmt::runtime(fmt_), *v) : std::string("-");
  };
  for (const TrainTable& t : suite.tables) {
    out += fmt::format("\n{}: {} [{}]\n  source: {}\n", t.id, t.title, to_string(t.metric),
                       t.source);
    if (!t.precision.empty()) out += fmt::format("  precision: {}\n", t.precision);
    out += fmt::format("  {:<8} {:<14} {:>5} {:>5} {:>9} {:>9} {:>8} {:>9} {:>7}  {}\n", "row",
                       "TPxPPxDP", "GPUs", "B", "measured", "predicted", "error %",
                       "iter s", "bubble%", "memory");
    for (const TrainPointResult& r : c.points) {
      if (r.table != t.id) continue;
      const TrainPoint& p = r.point;
      std::string tail;
      if (!p.skip.empty()) {
        tail = "not simulated: " + p.skip;
      } else {
        tail = fmt::format("{:.1f} GB{}", r.memory_per_gpu / 1e9, r.fits ? "" : " (does not fit)");
      }
      out += fmt::format("  {:<8} {:<14} {:>5} {:>5} {:>9.4g} {:>9} {:>8} {:>9} {:>7}  {}\n",
                         p.id, layout_text(p.layout), p.gpus, p.layout.global_batch, p.measured,
                         number(r.predicted, "{:.4g}"), number(r.error_pct, "{:+.1f}"),
                         p.skip.empty() ? fmt::format("{:.3f}", r.iteration_s) : "-",
                         p.skip.empty() ? fmt::format("{:.1f}", std::max(0.0, 100 * r.bubble)) : "-",
                         tail);
    }
    int simulated = 0;
    for (const TrainPointResult& r : c.points) simulated += r.table == t.id && r.error_pct;
    const auto& mape = c.mape_pct.at(t.id);
    out += mape ? fmt::format("  MAPE {:.1f}% over {} held-out points\n", *mape, simulated)
                : "  MAPE - (no simulated point)\n";
  }
  out += "\nMAPE per table\n";
  out += fmt::format("  {:<22} {:>7} {:>10}\n", "table", "MAPE %", "first look");
  for (const TrainTable& t : suite.tables) {
    out += fmt::format("  {:<22} {:>7} {:>10}\n", t.id, number(c.mape_pct.at(t.id), "{:.1f}"),
                       first_look_cell(suite.history, t.id));
  }
  out += fmt::format("  {:<22} {:>7} {:>10}\n", "overall", number(c.mape_pct.at("overall"), "{:.1f}"),
                     first_look_cell(suite.history, "overall"));
  return out + history_summary(suite.history);
}

std::string train_comparison_json(const TrainSuite& suite, const TrainComparison& c) {
  using nlohmann::json;
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json points = json::array();
  for (const TrainPointResult& r : c.points) {
    const TrainPoint& p = r.point;
    json j = {{"id", r.table + "/" + p.id},
              {"table", r.table},
              {"workload", p.workload},
              {"tp", p.layout.tp},
              {"pp", p.layout.pp},
              {"dp", p.layout.dp},
              {"gpus", p.gpus},
              {"micro_batch", p.layout.micro_batch},
              {"global_batch", p.layout.global_batch},
              {"recompute", par::to_string(p.layout.recompute)},
              {"sequence_parallel", p.layout.sequence_parallel},
              {"zero1", p.layout.zero1},
              {"measured", p.measured},
              {"predicted", opt(r.predicted)},
              {"error_pct", opt(r.error_pct)},
              {"held_out", true}};
    if (!p.skip.empty()) j["not_simulated"] = p.skip;
    if (r.predicted) {
      j["iteration_s"] = r.iteration_s;
      j["mfu"] = r.mfu;
      j["tflops_per_gpu_eq3"] = r.tflops_per_gpu;
      j["bubble"] = r.bubble;
      j["memory_per_gpu"] = r.memory_per_gpu;
      j["fits"] = r.fits;
    }
    if (!p.note.empty()) j["note"] = p.note;
    points.push_back(std::move(j));
  }
  json mape = json::object();
  for (const auto& [table, value] : c.mape_pct) mape[table] = opt(value);
  json tables = json::array();
  for (const TrainTable& t : suite.tables)
    tables.push_back({{"id", t.id}, {"title", t.title}, {"metric", to_string(t.metric)},
                      {"source", t.source}});
  return json{{"suite", suite.name},
              {"title", suite.title},
              {"topology", suite.topology},
              {"calibration_points", 0},
              {"tables", tables},
              {"points", points},
              {"mape_pct", mape},
              {"history", history_json(suite.history)}}
             .dump(2) + "\n";
}

}  // namespace gpuscale::validation
