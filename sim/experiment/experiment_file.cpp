#include "sim/experiment/experiment_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <limits>

#include "sim/exchange/exchange_choice.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/core/config_reader.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/shipped_files.hpp"
#include "topologies/src/topology_config.hpp"
#include "topologies/src/topology_loader.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/workload_document.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::sim {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kKeys = {
    "topology",  "set",       "workload",        "gpus",           "batch",    "comm",
    "exchange",  "algo",      "routing",         "scaling",        "images",   "fusion_mb",
    "fusion_cycle_ms",        "decode_threads",  "protocol",       "profile",  "iterations",
    "framework", "without",   "samples",         "seed",           "spatial",  "precision",
    "study",     "global_batch", "accumulate", "input_pipeline"};

// The file `node` names, looked up now so that an unknown name or a missing file is reported at
// its line: a shipped name as it is, a path taken from the experiment's folder.
std::string named_file(const ConfigNode& node, std::string_view what, const ShippedFolder& shipped,
                       const std::string& folder) {
  const std::string value = read_string(node, what);
  shipped.resolve(value, folder, node.origin());
  return file_or_name(value, folder);
}

}  // namespace

Experiment read_experiment(const ConfigNode& root, const std::string& folder) {
  const MapReader map(root, "experiment", kKeys);
  Experiment e;
  if (const auto* n = map.find("topology")) {
    e.topology = named_file(*n, "topology", topo::shipped_topologies(), folder);
  }
  if (const auto* n = map.find("set")) {
    std::vector<Override> written;
    for (const ConfigNode* item : items_or_one(*n, "set")) {
      const size_t on_machine = e.topology_overrides.size();
      add_override(e, read_string(*item, "an override (KEY.PATH=VALUE)"), item->origin());
      if (e.topology_overrides.size() > on_machine)
        written.push_back({e.topology_overrides.back(), item->origin()});
    }
    topo::load_topology_config_with(e.topology, written);  // a bad override fails at its line
  }
  if (const auto* n = map.find("workload")) {
    e.workloads.clear();
    for (const ConfigNode* item : items_or_one(*n, "workload")) {
      e.workloads.push_back(named_file(*item, "workload", wl::shipped_workloads(), folder));
    }
  }
  if (const auto* n = map.find("gpus")) {
    e.gpus.clear();
    for (const ConfigNode* item : items_or_one(*n, "gpus")) {
      e.gpus.push_back(static_cast<int>(read_integer(*item, "gpus", 1, 1 << 16)));
      e.gpus_written_at.push_back(item->origin());
    }
  }
  if (const auto* n = map.find("batch")) e.batches = read_counts(*n, "batch", 1 << 20);
  if (const auto* n = map.find("global_batch")) {
    if (map.find("batch") != nullptr) {
      throw ConfigError(n->origin(), "'global_batch' and 'batch' exclude each other (a global "
                                     "batch sets each GPU's share): keep one");
    }
    e.global_batch = read_integer(*n, "global_batch", 1, 1L << 30);
    e.global_batch_written_at = n->origin();
  }
  if (const auto* n = map.find("accumulate")) {
    e.accumulate = static_cast<int>(read_integer(*n, "accumulate", 1, 1024));
  }
  std::vector<std::string> comms;
  std::vector<Origin> comms_written_at;
  if (read_exchanges(map, comms, comms_written_at)) {
    e.comms = std::move(comms);
    e.comms_written_at = std::move(comms_written_at);
  }
  if (const auto* n = map.find("routing")) {
    e.routing = read_one_of(*n, "routing", topo::routing_mode_names());
  }
  if (const auto* n = map.find("scaling")) {
    const bool weak = read_one_of(*n, "scaling", {"strong", "weak"}) == "weak";
    e.scaling = weak ? Scaling::Weak : Scaling::Strong;
  }
  if (const auto* n = map.find("images")) e.images = read_integer(*n, "images", 1, 1L << 40);
  if (const auto* n = map.find("fusion_mb")) e.fusion_mb = read_number(*n, "fusion_mb", 0, 1e6);
  if (const auto* n = map.find("fusion_cycle_ms")) {
    e.fusion_cycle_ms = read_number(*n, "fusion_cycle_ms", 0, 1e6);
  }
  if (const auto* n = map.find("decode_threads")) {
    e.decode_threads = static_cast<int>(read_integer(*n, "decode_threads", 1, 1024));
  }
  if (const auto* n = map.find("input_pipeline")) {
    e.input_pipeline = read_one_of(*n, "input_pipeline", input_pipeline_names());
    e.input_pipeline_written_at = n->origin();
  }
  if (const auto* n = map.find("spatial")) {
    e.spatial = static_cast<int>(read_integer(*n, "spatial", 1, 1024));
    e.spatial_written_at = n->origin();
  }
  if (const auto* n = map.find("protocol")) {
    e.protocol = read_one_of(*n, "protocol", protocol_choice_names());
  }
  if (const auto* n = map.find("profile")) {
    e.profile = file_or_name(read_string(*n, "profile"), folder);
    if (!is_file(e.profile)) {
      throw ConfigError(n->origin(),
                        fmt::format("no profile file '{}' (check the path)", e.profile));
    }
  }
  if (const auto* n = map.find("framework")) {
    e.framework = named_file(*n, "framework", wl::shipped_frameworks(), folder);
  }
  if (const auto* n = map.find("precision")) {
    e.precision = read_string(*n, "precision");
    e.precision_written_at = n->origin();
    wl::check_precision_recipe_name(e.precision, e.precision_written_at);
  }
  // Looked up by `run`, which knows the suites (validation/); a path is the file's folder's.
  if (const auto* n = map.find("study")) {
    e.study = file_or_name(read_string(*n, "study"), folder);
    e.study_written_at = n->origin();
  }
  if (const auto* n = map.find("without")) {
    e.without.clear();
    for (const ConfigNode* item : items_or_one(*n, "without")) {
      e.without.push_back(read_one_of(*item, "without", mechanism_names()));
    }
  }
  if (const auto* n = map.find("iterations")) {
    e.iterations = static_cast<int>(read_integer(*n, "iterations", 2, 100));
  }
  if (const auto* n = map.find("samples")) {
    if (map.find("iterations") != nullptr) {
      throw ConfigError(n->origin(), "'samples' and 'iterations' exclude each other (a sampled "
                                     "run simulates samples + 1 iterations): keep one");
    }
    e.samples = static_cast<int>(read_integer(*n, "samples", 1, kMaxSamples));
  }
  if (const auto* n = map.find("seed")) {
    if (map.find("samples") == nullptr) {
      throw ConfigError(n->origin(),
                        "'seed' only matters with 'samples': add samples or remove it");
    }
    e.seed = static_cast<std::uint64_t>(
        read_integer(*n, "seed", 0, std::numeric_limits<long>::max()));
  }
  // Every workload read with the workload overrides, so that a bad one fails at the `set:` line.
  if (const auto* n = map.find("set"); n != nullptr && !e.workload_overrides.empty()) {
    for (const std::string& workload : e.workloads) {
      try {
        wl::load_workload(workload, e.workload_overrides);
      } catch (const ConfigError& error) {
        throw ConfigError(n->origin(), error.what());
      }
    }
  }
  return e;
}

Experiment load_experiment_file(const std::string& path) {
  const ConfigNode root = ConfigNode::load_file(path);
  // An empty file is a slip (a wrong path, a file not yet written), not a request for the
  // defaults: running them would print a study nobody asked for.
  const bool empty = (root.is_scalar() && root.value().empty()) ||
                     (root.is_map() && root.entries().empty());
  if (empty) {
    throw ConfigError(Origin{path, 1}, "the experiment file is empty: give at least one key "
                                       "(docs/experiments.md), e.g. `workload: resnet-50`");
  }
  return read_experiment(root, fs::path(path).parent_path().string());
}

}  // namespace gpuscale::sim
