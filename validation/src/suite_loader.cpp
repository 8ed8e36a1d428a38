// Strict reading of suite.yaml and its tables: exactly the keys the data files use, each value
// checked against what the suite defines; claims.yaml is read by claim_loader.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>

#include "sim/exchange/exchange_choice.hpp"
#include "sim/experiment/experiment.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/core/config_reader.hpp"
#include "topologies/core/shipped_files.hpp"
#include "topologies/src/topology_document.hpp"
#include "validation/src/claim_loader.hpp"
#include "validation/src/suite.hpp"
#include "validation/src/suite_reading.hpp"
#include "workloads/src/dataset.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/workload_document.hpp"

namespace gpuscale::validation {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kSuiteKeys = {
    "name",     "title",        "source", "setup",  "machines", "methods",
    "networks", "alternatives", "tables", "claims", "history"};
const std::vector<std::string> kMachineKeys = {"topology", "gpus", "gpu_memory", "networks"};
const std::vector<std::string> kSetupKeys = {"topology",  "framework",     "gpus",
                                             "batches",   "batch_per",     "epochs",
                                             "dataset",   "strong_images", "weak_images_per_gpu",
                                             "precision", "gpu_memory",    "data",
                                             "decode_threads", "fusion_mb", "alternatives"};
const std::vector<std::string> kSetupAlternativeKeys = {
    "id",       "batch_per", "decode_threads", "fusion_mb", "data",
    "networks", "methods",   "frameworks",     "why"};
const std::vector<std::string> kMethodKeys = {"comm", "spatial"};
const std::vector<std::string> kNetworkKeys = {"workload",  "methods",   "batches",
                                               "batch_per", "framework", "precision",
                                               "twin_of",   "input_pipeline"};
const std::vector<std::string> kSourceKeys = {"file", "slide", "also", "text"};
const std::vector<std::string> kTableKeys = {"id",     "title",       "source",
                                             "metric", "relative_to", "relative_to_machine",
                                             "interpretation",        "points",
                                             "bounds", "derived_columns", "alternatives"};
const std::vector<std::string> kAlternativeKeys = {"id", "gpus", "why"};
const std::vector<std::string> kPointKeys = {"network", "method",   "machine", "gpus",   "batch",
                                             "scaling", "measured", "suspect", "note"};
const std::vector<std::string> kBoundKeys = {"network", "method",  "machine", "gpus",
                                             "batch",   "scaling", "below",   "above"};
// The memory table's printed percentage columns, kept by the transcriber as a check on the
// transcription; they are not points, so only their shape is checked.
const std::vector<std::string> kDerivedColumnKeys = {"network",
                                                     "batch",
                                                     "gpu0_over_gpux_pct",
                                                     "recomputed",
                                                     "increase_vs_batch16_pct",
                                                     "recomputed_from_gpu0"};

const std::vector<std::pair<const char*, Metric>> kMetrics = {
    {"speedup", Metric::Speedup},
    {"nccl_overhead_pct", Metric::OverheadPct},
    {"images_per_s", Metric::ImagesPerS},
    {"memory_pretrain_gb", Metric::MemoryPretrainGb},
    {"memory_gpu0_gb", Metric::MemoryGpu0Gb},
    {"memory_gpux_gb", Metric::MemoryGpuxGb},
    {"epoch_min", Metric::EpochMin},
    {"gain_pct", Metric::GainPct},
    {"precision_speedup", Metric::PrecisionSpeedup}};

std::vector<std::string> shipped_suite_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(shipped_suites().dir(), ec)) {
    if (is_file((entry.path() / "suite.yaml").string()))
      names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string suite_file(const std::string& name_or_path) {
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml")) {
    const fs::path given(name_or_path);
    std::error_code ec;
    const fs::path file = fs::is_directory(given, ec) ? given / "suite.yaml" : given;
    if (!is_file(file.string())) {
      throw ConfigError(Origin{file.string(), 0},
                        "no such file (give a suite folder or its suite.yaml)");
    }
    return file.string();
  }
  const fs::path shipped = fs::path(shipped_suites().dir()) / name_or_path / "suite.yaml";
  if (is_file(shipped.string())) return shipped.string();
  throw ConfigError(Origin{},
                    unknown_name_message("validation suite", name_or_path, shipped_suite_names()) +
                        ", or give the path of a suite folder");
}

void check_source(const ConfigNode& node, std::string_view what) {
  const MapReader map(node, std::string(what), kSourceKeys);
  for (const auto& entry : node.entries())
    check_text(entry.value, fmt::format("'{}' of {}", entry.key, what));
}

// A shipped workload name, or a path taken relative to the suite's folder.
std::string workload_of(const ConfigNode& node, const std::string& folder) {
  const std::string value = read_string(node, "workload");
  const std::string file = wl::shipped_workloads().resolve(value, folder, node.origin());
  const bool is_path = value.find('/') != std::string::npos || value.ends_with(".yaml");
  return is_path ? file : value;
}

// A shipped framework, or a framework file taken relative to the suite's folder; loaded here so
// that a bad file is an error at this line.
std::string framework_of(const ConfigNode& node, const std::string& folder) {
  const std::string value = read_string(node, "framework");
  const std::string file = wl::shipped_frameworks().resolve(value, folder, node.origin());
  wl::load_framework(file, node.origin());
  const bool is_path = value.find('/') != std::string::npos || value.ends_with(".yaml");
  return is_path ? file : value;
}

std::string comm_method(const ConfigNode& node) {
  const std::string name = read_string(node, "comm method");
  sim::check_exchange_name(name, node.origin());
  return name;
}

// A reading's `key`: the study's names, each mapped to what `value_of` reads.
std::map<std::string, std::string> renamed(
    const MapReader& reading, std::string_view key, std::string_view what,
    const std::function<std::string(const ConfigNode&)>& value_of) {
  std::map<std::string, std::string> out;
  const ConfigNode* n = reading.find(key);
  if (n == nullptr) return out;
  if (!n->is_map() || n->entries().empty()) {
    throw ConfigError(n->origin(), fmt::format("{} of an alternative reading must map the "
                                               "study's {}",
                                               key, what));
  }
  for (const auto& entry : n->entries()) out[entry.key] = value_of(entry.value);
  return out;
}

Setup read_setup(const ConfigNode& node, const std::string& folder) {
  const MapReader map(node, "setup", kSetupKeys);
  Setup s;
  s.origin = node.origin();
  s.topology = map.string("topology", "dgx1-v100");
  topo::shipped_topologies().resolve(s.topology, "", map.require("topology", "").origin());
  s.framework = read_one_of(map.require("framework", "mxnet"), "framework",
                            wl::shipped_frameworks().names());
  const ConfigNode& gpus = map.require("gpus", "[1, 2, 4, 8]");
  s.gpus = read_counts(gpus, "setup.gpus", 1 << 20);
  if (std::find(s.gpus.begin(), s.gpus.end(), 1) == s.gpus.end()) {
    throw ConfigError(gpus.origin(), "setup.gpus must include 1: speedups are over one GPU");
  }
  s.batches = read_counts(map.require("batches", "[16, 32, 64]"), "setup.batches", 1 << 20);
  // A total batch is split over the GPUs, so it must divide by every GPU count.
  auto batch_total = [&](const ConfigNode& batch_per, const std::string& what) {
    const bool total = read_one_of(batch_per, what, {"gpu", "total"}) == "total";
    for (int b : s.batches) {
      for (int g : s.gpus) {
        if (total && b % g != 0)
          throw ConfigError(batch_per.origin(),
                            fmt::format("a total batch of {} does not split over {} GPUs (give "
                                        "batches every GPU count divides)",
                                        b, g));
      }
    }
    return total;
  };
  s.batch_total = batch_total(map.require("batch_per", "gpu"), "setup.batch_per");
  // The harness predicts one-epoch runs; every metric is a ratio of such runs or memory.
  read_integer(map.require("epochs", "1"), "setup.epochs", 1, 1);
  // A study may train its networks on different datasets: one each.
  for (const ConfigNode* dataset :
       items_or_one(map.require("dataset", "imagenet"), "setup.dataset")) {
    s.datasets.push_back(read_string(*dataset, "setup.dataset"));
    wl::shipped_datasets().resolve(s.datasets.back(), "", dataset->origin());
  }
  // A number, or `dataset`: each network's epoch is its own dataset's.
  const ConfigNode& strong = map.require("strong_images", "256000");
  s.strong_images_per_dataset = strong.is_scalar() && strong.value() == "dataset";
  if (!s.strong_images_per_dataset)
    s.strong_images = read_integer(strong, "setup.strong_images (or `dataset`)", 1, 1L << 40);
  s.weak_images_per_gpu = read_integer(map.require("weak_images_per_gpu", "256000"),
                                       "setup.weak_images_per_gpu", 1, 1L << 40);
  s.precision = read_one_of(map.require("precision", "fp32"), "setup.precision",
                            wl::precision_recipe_names());
  s.gpu_memory = read_bytes(map.require("gpu_memory", "16 GB"), "setup.gpu_memory");
  // `synthetic`: the runs fed generated batches (MXNet's --benchmark 1), so the predictions
  // leave the input pipeline out.
  auto synthetic = [](const ConfigNode& data, const std::string& what) {
    return read_one_of(data, what, {"dataset", "synthetic"}) == "synthetic";
  };
  if (const ConfigNode* data = map.find("data")) s.synthetic_data = synthetic(*data, "setup.data");
  auto decode_threads = [](const ConfigNode& threads) {
    return static_cast<int>(read_integer(threads, "decode_threads", 1, 1024));
  };
  if (const ConfigNode* n = map.find("decode_threads")) s.decode_threads = decode_threads(*n);
  auto fusion_mb = [](const ConfigNode& mb) { return read_number(mb, "fusion_mb", 0, 1e6); };
  if (const ConfigNode* n = map.find("fusion_mb")) s.fusion_mb = fusion_mb(*n);
  if (const ConfigNode* alternatives = map.find("alternatives")) {
    if (!alternatives->is_sequence())
      throw ConfigError(alternatives->origin(), "setup.alternatives must be a list");
    for (const ConfigNode& item : alternatives->items()) {
      const MapReader alt(item, "alternative reading of the setup", kSetupAlternativeKeys);
      SetupAlternative reading{.id = alt.string("id", "total-batch"),
                               .why = read_string(alt.require("why", "\"the evidence\""), "why"),
                               .origin = item.origin()};
      if (const ConfigNode* n = alt.find("batch_per"))
        reading.batch_total = batch_total(*n, "batch_per");
      if (const ConfigNode* n = alt.find("decode_threads"))
        reading.decode_threads = decode_threads(*n);
      if (const ConfigNode* n = alt.find("fusion_mb")) reading.fusion_mb = fusion_mb(*n);
      if (const ConfigNode* n = alt.find("data")) reading.synthetic_data = synthetic(*n, "data");
      // The study's names are checked once the suite's networks and methods are read
      // (load_suite); a reading changes a method's --comm method, never how it splits samples.
      reading.networks = renamed(alt, "networks", "networks to workloads",
                                 [&](const ConfigNode& n) { return workload_of(n, folder); });
      reading.methods = renamed(alt, "methods", "methods to --comm methods", comm_method);
      reading.frameworks = renamed(alt, "frameworks", "networks to frameworks",
                                   [&](const ConfigNode& n) { return framework_of(n, folder); });
      if (!reading.batch_total && !reading.decode_threads && !reading.fusion_mb &&
          !reading.synthetic_data && reading.networks.empty() && reading.methods.empty() &&
          reading.frameworks.empty()) {
        throw ConfigError(item.origin(), "an alternative reading of the setup must change "
                                         "batch_per, decode_threads, fusion_mb, data, networks, "
                                         "methods or frameworks");
      }
      s.alternatives.push_back(std::move(reading));
    }
  }
  return s;
}

// The study's other servers: `{NAME: {topology, gpus, gpu_memory, networks}}`. Their networks
// are checked once the suite's are read (load_suite).
std::vector<Machine> read_machines(const ConfigNode& node,
                                   std::vector<const ConfigNode*>& network_lists) {
  if (!node.is_map() || node.entries().empty())
    throw ConfigError(node.origin(), "machines must map the study's server names to machines");
  std::vector<Machine> machines;
  for (const auto& entry : node.entries()) {
    const MapReader map(entry.value, "machine " + entry.key, kMachineKeys);
    Machine& m = machines.emplace_back();
    m.name = entry.key;
    m.origin = entry.where();
    m.topology = map.string("topology", "c4140-b");
    topo::shipped_topologies().resolve(m.topology, "", map.require("topology", "").origin());
    const ConfigNode& gpus = map.require("gpus", "[1, 2, 4]");
    m.gpus = read_counts(gpus, "gpus of machine " + m.name, 1 << 20);
    if (std::find(m.gpus.begin(), m.gpus.end(), 1) == m.gpus.end())
      throw ConfigError(gpus.origin(),
                        "a machine's gpus must include 1: speedups are over one GPU");
    m.gpu_memory = read_bytes(map.require("gpu_memory", "16 GB"), "gpu_memory");
    network_lists.push_back(map.find("networks"));
  }
  return machines;
}

// `fill` reads an entry's value into its mapping.
std::vector<NameMapping> read_mappings(
    const ConfigNode& node, std::string_view what,
    const std::function<void(NameMapping&, const ConfigNode&)>& fill) {
  if (!node.is_map() || node.entries().empty()) {
    throw ConfigError(node.origin(),
                      fmt::format("{} must map the study's names to gpuscale's", what));
  }
  std::vector<NameMapping> mappings;
  for (const auto& entry : node.entries()) {
    NameMapping& m = mappings.emplace_back();
    m.study = entry.key;
    m.origin = entry.where();
    fill(m, entry.value);
  }
  return mappings;
}

// `nccl`, or `{comm: nccl, spatial: 4}` for a method that splits each sample over 4 GPUs. Every
// GPU count but one must form whole groups; a total batch is not split over groups.
void read_method(NameMapping& m, const ConfigNode& node, const Setup& setup) {
  if (!node.is_map()) {
    m.gpuscale = comm_method(node);
    return;
  }
  const MapReader map(node, "method " + m.study, kMethodKeys);
  m.gpuscale = comm_method(map.require("comm", "nccl"));
  const ConfigNode* spatial = map.find("spatial");
  if (spatial == nullptr) return;
  m.spatial = static_cast<int>(read_integer(*spatial, "spatial", 1, 1024));
  for (int g : setup.gpus) {
    if (g > 1 && g % m.spatial != 0)
      throw ConfigError(spatial->origin(),
                        fmt::format("method {} splits each sample over {} GPUs, but setup.gpus "
                                    "has {} (give GPU counts that form whole groups)",
                                    m.study, m.spatial, g));
  }
  const bool total_batch =
      setup.batch_total ||
      std::any_of(setup.alternatives.begin(), setup.alternatives.end(),
                  [](const SetupAlternative& a) { return a.batch_total == true; });
  if (total_batch && m.spatial > 1)
    throw ConfigError(spatial->origin(),
                      fmt::format("method {} splits samples over GPUs: give batches per group "
                                  "(batch_per: gpu, in the setup and its readings)",
                                  m.study));
}

// A workload, or `{workload: W, methods: [...], batches: [...]}` for a network the study ran
// with some of its methods or batches only.
void read_network(NameMapping& n, const ConfigNode& node, const std::string& folder,
                  const SuiteNames& names) {
  if (!node.is_map()) {
    n.gpuscale = workload_of(node, folder);
    return;
  }
  const MapReader map(node, "network " + n.study, kNetworkKeys);
  n.gpuscale = workload_of(map.require("workload", "resnet-50"), folder);
  if (const ConfigNode* methods = map.find("methods")) n.methods = names.methods(*methods);
  if (const ConfigNode* batches = map.find("batches")) n.batches = names.batches(*batches);
  if (const ConfigNode* framework = map.find("framework"))
    n.framework = framework_of(*framework, folder);
  if (const ConfigNode* precision = map.find("precision"))
    n.precision = read_one_of(*precision, "precision", wl::precision_recipe_names());
  if (const ConfigNode* per = map.find("batch_per"))
    n.batch_total = read_one_of(*per, "batch_per", {"gpu", "total"}) == "total";
  // Whether the network's framework has the pipeline is checked where it runs, at this line.
  if (const ConfigNode* pipeline = map.find("input_pipeline")) {
    n.input_pipeline = read_one_of(*pipeline, "input_pipeline", sim::input_pipeline_names());
    n.input_pipeline_at = pipeline->origin();
  }
  // Checked once every network is read (check_twins).
  if (const ConfigNode* twin = map.find("twin_of")) n.twin_of = read_string(*twin, "twin_of");
}

void check_alternatives(const ConfigNode& node, const SuiteNames& names,
                        const std::string& folder) {
  if (!node.is_map())
    throw ConfigError(node.origin(), "alternatives must map networks to lists of workloads");
  for (const auto& entry : node.entries()) {
    names.network(ConfigNode::scalar(entry.key, entry.where()));
    for (const ConfigNode* item : items_or_one(entry.value, "alternatives"))
      workload_of(*item, folder);
  }
}

sim::Scaling read_scaling(const ConfigNode& node) {
  return read_one_of(node, "scaling", {"strong", "weak"}) == "weak" ? sim::Scaling::Weak
                                                                    : sim::Scaling::Strong;
}

std::vector<const ConfigNode*> list_items(const MapReader& map, std::string_view key) {
  std::vector<const ConfigNode*> items;
  const ConfigNode* node = map.find(key);
  if (node == nullptr) return items;
  if (!node->is_sequence()) {
    throw ConfigError(node->origin(), fmt::format("'{}' of {} must be a list (write [] for none)",
                                                  key, map.what()));
  }
  for (const ConfigNode& item : node->items()) items.push_back(&item);
  return items;
}

// The run a point or bound is about; its id names the table and the run.
void read_run(StudyRun& run, const MapReader& map, const Table& table, const SuiteNames& names) {
  run.origin = map.node().origin();
  run.network = names.network(map.require("network", "LeNet"));
  run.method = names.method(map.require("method", "P2P"));
  if (const ConfigNode* machine = map.find("machine")) run.machine = names.machine(*machine);
  const ConfigNode& gpus = map.require("gpus", "8");
  run.gpus = names.gpus(gpus, run.machine);
  run.batch = names.batch(map.require("batch", "16"));
  run.scaling = read_scaling(map.require("scaling", "strong"));
  names.check_run(run.network, run.method, run.batch, map.node().origin());
  names.check_on_machine(run.network, run.machine, map.node().origin());
  // What the metric compares the run with must be a run of the suite too.
  if (table.metric == Metric::GainPct) {
    names.check_on_machine(run.network, table.relative_to_machine, map.node().origin());
    names.gpus(gpus, table.relative_to_machine);
  }
  if (table.metric == Metric::PrecisionSpeedup) {
    const std::string twin = names.twin(run.network, map.node().origin());
    names.check_run(twin, run.method, run.batch, map.node().origin());
    names.check_on_machine(twin, run.machine, map.node().origin());
  }
  run.id = fmt::format("{}/{}/{}/{}{}gpu/b{}{}", table.id, run.network, run.method,
                       run.machine.empty() ? "" : run.machine + "/", run.gpus, run.batch,
                       run.scaling == sim::Scaling::Weak ? "/weak" : "");
}

Point read_point(const ConfigNode& node, const Table& table, const SuiteNames& names) {
  const MapReader map(node, "point of table " + table.id, kPointKeys);
  Point p;
  read_run(p, map, table, names);
  const ConfigNode& measured = map.require("measured", "1.62");
  p.measured = read_number(measured, "measured", -1e12, 1e12);
  if (p.measured == 0)
    throw ConfigError(measured.origin(), "measured is 0: a relative error needs a non-zero value");
  // An overhead or a gain may be negative (the method or machine was slower); a speedup, a
  // throughput, a time, a memory or a ratio of times may not.
  const bool signed_metric = table.metric == Metric::OverheadPct || table.metric == Metric::GainPct;
  if (p.measured < 0 && !signed_metric) {
    throw ConfigError(measured.origin(),
                      fmt::format("measured is {:g}, but a {} is positive (check the sign)",
                                  p.measured, to_string(table.metric)));
  }
  if (const auto* n = map.find("suspect")) p.suspect = read_bool(*n, "suspect");
  if (const auto* n = map.find("note")) p.note = read_string(*n, "note");
  if (table.metric == Metric::MemoryGpuxGb && p.gpus < 2) {
    throw ConfigError(
        node.origin(),
        "memory_gpux_gb needs a run of 2 or more GPUs (GPUx is a GPU other than GPU0)");
  }
  return p;
}

Bound read_bound(const ConfigNode& node, const Table& table, const SuiteNames& names) {
  const MapReader map(node, "bound of table " + table.id, kBoundKeys);
  Bound b;
  read_run(b, map, table, names);
  if (const ConfigNode* n = map.find("below")) b.below = read_number(*n, "below", -1e12, 1e12);
  if (const ConfigNode* n = map.find("above")) b.above = read_number(*n, "above", -1e12, 1e12);
  if (!b.below && !b.above) map.require("below", "3");
  if (b.below && b.above && *b.above >= *b.below)
    throw ConfigError(node.origin(), fmt::format("above ({:g}) must be less than below ({:g})",
                                                 *b.above, *b.below));
  return b;
}

void check_derived_column(const ConfigNode& node, const SuiteNames& names) {
  const MapReader map(node, "derived column", kDerivedColumnKeys);
  names.network(map.require("network", "LeNet"));
  names.batch(map.require("batch", "16"));
  for (const auto& entry : node.entries()) {
    if (entry.key != "network" && entry.key != "batch")
      optional_number(entry.value, entry.key, -1e6, 1e6);
  }
}

Table read_table(const std::string& path, const SuiteNames& names) {
  const ConfigNode root = ConfigNode::load_file(path);
  const MapReader map(root, "table", kTableKeys);
  Table t;
  t.id = map.string("id", fs::path(path).stem().string());
  t.title = map.string("title", "\"LeNet speedup over 1 GPU\"");
  std::vector<std::string> metric_names;
  for (const auto& [name, metric] : kMetrics) metric_names.push_back(name);
  const std::string metric = read_one_of(map.require("metric", "speedup"), "metric", metric_names);
  t.metric = std::find_if(kMetrics.begin(), kMetrics.end(), [&](const auto& m) {
               return metric == m.first;
             })->second;
  if (const auto* n = map.find("relative_to")) {
    if (t.metric != Metric::OverheadPct) {
      throw ConfigError(
          n->origin(),
          fmt::format("relative_to applies to metric nccl_overhead_pct, not {} (remove it)",
                      metric));
    }
    t.relative_to = names.method(*n);
  } else if (t.metric == Metric::OverheadPct) {
    map.require("relative_to", "P2P");
  }
  if (const auto* n = map.find("relative_to_machine")) {
    if (t.metric != Metric::GainPct) {
      throw ConfigError(n->origin(),
                        fmt::format("relative_to_machine applies to metric gain_pct, not {} "
                                    "(remove it)",
                                    metric));
    }
    t.relative_to_machine = names.machine(*n);
  } else if (t.metric == Metric::GainPct) {
    map.require("relative_to_machine", "C4140-B");
  }
  if (const auto* n = map.find("source")) check_source(*n, "source of table " + t.id);
  if (const auto* n = map.find("interpretation")) check_text(*n, "interpretation");
  for (const ConfigNode* item : list_items(map, "points"))
    t.points.push_back(read_point(*item, t, names));
  for (const ConfigNode* item : list_items(map, "bounds"))
    t.bounds.push_back(read_bound(*item, t, names));
  for (const ConfigNode* item : list_items(map, "derived_columns"))
    check_derived_column(*item, names);
  for (const ConfigNode* item : list_items(map, "alternatives")) {
    const MapReader alt(*item, "alternative reading of table " + t.id, kAlternativeKeys);
    t.alternatives.push_back({alt.string("id", "two-gpus"), names.gpu_counts(alt.require("gpus", "[2]")),
                              read_string(alt.require("why", "\"the evidence for it\""), "why"),
                              item->origin()});
  }
  return t;
}

// A file of the suite, named relative to its folder; a missing one blames the line naming it.
std::string file_in(const std::string& folder, const ConfigNode& node, std::string_view what) {
  const fs::path file = fs::path(folder) / read_string(node, what);
  if (!is_file(file.string())) {
    throw ConfigError(node.origin(),
                      fmt::format("no {} file '{}' (check the name)", what, file.string()));
  }
  return file.string();
}

// A network's total batch (its own batch_per, or the setup's) is split over every GPU count it
// runs at, on every machine.
void check_total_batches(const Suite& suite) {
  const std::vector<Machine> machines = suite.setup.all_machines();
  for (const NameMapping& n : suite.networks) {
    if (!suite.batch_total_of(n.study)) continue;
    for (const Machine& m : machines) {
      if (!m.networks.empty() &&
          std::find(m.networks.begin(), m.networks.end(), n.study) == m.networks.end())
        continue;
      for (int b : suite.batches_of(n.study)) {
        for (int g : m.gpus) {
          if (b % g != 0)
            throw ConfigError(n.origin, fmt::format("network {}'s total batch of {} does not "
                                                    "split over {} GPUs{} (give batches every "
                                                    "GPU count divides)",
                                                    n.study, b, g,
                                                    m.name.empty() ? "" : " of machine " + m.name));
        }
      }
    }
  }
}

// A network is the twin of at most one, in another precision, and no twin has one of its own.
void check_twins(const Suite& suite, const SuiteNames& names) {
  std::map<std::string, const NameMapping*> twin_of;
  for (const NameMapping& m : suite.networks) {
    if (m.twin_of.empty()) continue;
    names.network(ConfigNode::scalar(m.twin_of, m.origin));
    const NameMapping& other = suite.network_mapping(m.twin_of);
    std::string problem;
    if (m.twin_of == m.study) problem = "itself";
    else if (!other.twin_of.empty()) problem = other.study + ", which is a twin itself";
    else if (twin_of.contains(m.twin_of))
      problem = m.twin_of + ", which " + twin_of.at(m.twin_of)->study + " already twins";
    else if (suite.precision_of(m.study) == suite.precision_of(m.twin_of))
      problem = m.twin_of + ", which trains in the same precision";
    if (!problem.empty()) {
      throw ConfigError(m.origin, fmt::format("network {} is twin_of {} (a twin is another "
                                              "network in another precision)",
                                              m.study, problem));
    }
    twin_of[m.twin_of] = &m;
  }
}

// Every point and bound names one run of one table: a second with the same id is a slip.
void check_unique_ids(const Suite& suite) {
  std::map<std::string, Origin> seen;
  auto check = [&seen](const std::string& id, const Origin& origin) {
    const auto [it, inserted] = seen.emplace(id, origin);
    if (!inserted)
      throw ConfigError(origin,
                        fmt::format("{} is given twice (first at {})", id, it->second.str()));
  };
  for (const Table& t : suite.tables) {
    for (const Point& p : t.points) check(p.id, p.origin);
    for (const Bound& b : t.bounds) check(b.id, b.origin);
  }
}

}  // namespace

const char* to_string(Metric metric) {
  for (const auto& [name, m] : kMetrics) {
    if (m == metric) return name;
  }
  throw std::logic_error("validation: unknown metric");
}

std::string suite_yaml(const std::string& name_or_path) { return suite_file(name_or_path); }

SuiteKind suite_kind(const std::string& name_or_path) {
  const ConfigNode doc = ConfigNode::load_file(suite_file(name_or_path));
  const ConfigNode* kind = doc.is_map() ? doc.find("kind") : nullptr;
  if (kind == nullptr) return SuiteKind::study;
  const std::string name = read_one_of(*kind, "kind", {"train", "layers"});
  return name == "train" ? SuiteKind::train : SuiteKind::layers;
}

const ShippedFolder& shipped_suites() {
  static const ShippedFolder folder("validation suite", "GPUSCALE_VALIDATION_DIR", "validation");
  return folder;
}

const std::string& Suite::comm_of(const std::string& method) const {
  for (const NameMapping& m : methods) {
    if (m.study == method) return m.gpuscale;
  }
  throw std::logic_error("validation: method '" + method + "' is not in the suite");
}

const std::string& Suite::workload_of(const std::string& network) const {
  return network_mapping(network).gpuscale;
}

const std::string& Suite::framework_of(const std::string& network) const {
  const NameMapping& m = network_mapping(network);
  return m.framework.empty() ? setup.framework : m.framework;
}

bool Suite::batch_total_of(const std::string& network) const {
  return network_mapping(network).batch_total.value_or(setup.batch_total);
}

const std::string& Suite::precision_of(const std::string& network) const {
  const NameMapping& m = network_mapping(network);
  return m.precision.empty() ? setup.precision : m.precision;
}

const std::string* Suite::find_twin(const std::string& network) const {
  for (const NameMapping& m : networks) {
    if (m.twin_of == network) return &m.study;
  }
  return nullptr;
}

const std::string& Suite::twin(const std::string& network) const {
  if (const std::string* found = find_twin(network)) return *found;
  throw std::logic_error("validation: no network is '" + network + "' in another precision");
}

Machine Setup::machine(const std::string& name) const {
  if (name.empty()) return {"", topology, gpus, gpu_memory, {}, origin};
  for (const Machine& m : machines) {
    if (m.name == name) return m;
  }
  throw std::logic_error("validation: machine '" + name + "' is not in the suite");
}

std::vector<Machine> Setup::all_machines() const {
  std::vector<Machine> all = {machine("")};
  all.insert(all.end(), machines.begin(), machines.end());
  return all;
}

int Suite::spatial_of(const std::string& method) const {
  for (const NameMapping& m : methods) {
    if (m.study == method) return m.spatial;
  }
  throw std::logic_error("validation: method '" + method + "' is not in the suite");
}

const NameMapping& Suite::network_mapping(const std::string& network) const {
  for (const NameMapping& m : networks) {
    if (m.study == network) return m;
  }
  throw std::logic_error("validation: network '" + network + "' is not in the suite");
}

std::vector<std::string> Suite::methods_of(const std::string& network) const {
  const std::vector<std::string>& only = network_mapping(network).methods;
  std::vector<std::string> names;
  for (const NameMapping& m : methods) {
    if (only.empty() || std::find(only.begin(), only.end(), m.study) != only.end())
      names.push_back(m.study);
  }
  return names;
}

std::vector<int> Suite::batches_of(const std::string& network) const {
  const std::vector<int>& only = network_mapping(network).batches;
  std::vector<int> batches;
  for (int b : setup.batches) {
    if (only.empty() || std::find(only.begin(), only.end(), b) != only.end()) batches.push_back(b);
  }
  return batches;
}

Suite Suite::read_as(const SetupAlternative& reading) const {
  Suite s = *this;
  s.setup = setup.read_as(reading);
  for (NameMapping& m : s.networks) {
    if (auto it = reading.networks.find(m.study); it != reading.networks.end())
      m.gpuscale = it->second;
    if (auto it = reading.frameworks.find(m.study); it != reading.frameworks.end())
      m.framework = it->second;
  }
  for (NameMapping& m : s.methods) {
    if (auto it = reading.methods.find(m.study); it != reading.methods.end())
      m.gpuscale = it->second;
  }
  return s;
}

Suite load_suite(const std::string& name_or_path) {
  const std::string path = suite_file(name_or_path);
  const std::string folder = fs::path(path).parent_path().string();
  const ConfigNode root = ConfigNode::load_file(path);
  if (const ConfigNode* kind = root.is_map() ? root.find("kind") : nullptr) {
    throw ConfigError(kind->origin(), "a suite of kind '" + kind->value() +
                                          "' is not a study suite (train_suite.hpp loads "
                                          "`kind: train`, layers_suite.hpp `kind: layers`)");
  }
  const MapReader map(root, "validation suite", kSuiteKeys);
  Suite suite;
  suite.name = map.string("name", "dgx1-mxnet");
  suite.title = map.string("title", "\"the study's title\"");
  if (const auto* n = map.find("source")) check_source(*n, "source of the suite");
  suite.setup = read_setup(map.require("setup", "{topology: dgx1-v100, ...}"), folder);
  std::vector<const ConfigNode*> machine_networks;
  if (const ConfigNode* machines = map.find("machines"))
    suite.setup.machines = read_machines(*machines, machine_networks);
  suite.methods = read_mappings(map.require("methods", "{P2P: p2p}"), "methods",
                                [&](NameMapping& m, const ConfigNode& n) {
                                  read_method(m, n, suite.setup);
                                });
  const SuiteNames names(suite);
  suite.networks = read_mappings(map.require("networks", "{LeNet: lenet}"), "networks",
                                 [&](NameMapping& m, const ConfigNode& n) {
                                   read_network(m, n, folder, names);
                                 });
  for (size_t i = 0; i < machine_networks.size(); ++i) {
    if (machine_networks[i] != nullptr)
      suite.setup.machines[i].networks = names.networks(*machine_networks[i]);
  }
  check_twins(suite, names);
  check_total_batches(suite);
  for (const SetupAlternative& reading : suite.setup.alternatives) {
    for (const auto& [network, workload] : reading.networks)
      names.network(ConfigNode::scalar(network, reading.origin));
    for (const auto& [method, comm] : reading.methods)
      names.method(ConfigNode::scalar(method, reading.origin));
    for (const auto& [network, framework] : reading.frameworks)
      names.network(ConfigNode::scalar(network, reading.origin));
  }
  if (const auto* n = map.find("alternatives")) check_alternatives(*n, names, folder);
  // A study may state its results in words only: a suite of claims.
  if (const ConfigNode* tables = map.find("tables")) {
    for (const ConfigNode* item : items_or_one(*tables, "tables"))
      suite.tables.push_back(read_table(file_in(folder, *item, "table"), names));
  }
  check_unique_ids(suite);
  // A study may state no qualitative claims.
  if (const ConfigNode* claims = map.find("claims"))
    suite.claims = load_claims(file_in(folder, *claims, "claims"), names);
  std::vector<std::string> table_ids;
  for (const Table& t : suite.tables) table_ids.push_back(t.id);
  suite.history = read_suite_history(map.find("history"), table_ids);
  return suite;
}

}  // namespace gpuscale::validation
