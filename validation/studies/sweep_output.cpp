#include "validation/studies/sweep_output.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <system_error>
#include <utility>

#include "sim/experiment/result_writer.hpp"
#include "topologies/core/output_file.hpp"
#include "validation/studies/run_hash.hpp"

namespace gpuscale::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

const Origin kOut{"--out", 0};

std::string quoted(const std::string& text) { return json(text).dump(); }

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(Origin{path, 0}, "cannot read it: is this a sweep's output folder?");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The study's name and every run's hash, in order: the identity shards of one study share.
std::string identity_of(const Study& study, const std::vector<std::string>& run_hashes) {
  std::string all = study.name;
  for (const std::string& hash : run_hashes) all += hash;
  return hash_text(all);
}

std::string machine_yaml(const Machine& m) {
  if (m.document) return fmt::format("{{inline: {}}}", quoted(m.defined_at));
  std::string set;
  for (const std::string& o : m.overrides) set += (set.empty() ? "" : ", ") + quoted(o);
  return set.empty() ? fmt::format("{{topology: {}}}", quoted(m.topology))
                     : fmt::format("{{topology: {}, set: [{}]}}", quoted(m.topology), set);
}

std::string resolved_study_yaml(const Study& study, const std::vector<std::string>& run_hashes,
                                const std::string& identity) {
  std::string axes;
  for (const std::string& a : study.axes) axes += (axes.empty() ? "" : ", ") + a;
  std::string out = fmt::format("# {} resolved by gpuscale sweep: every run spelled out, with the "
                                "hash its cached result is kept under.\nname: {}\ndescription: "
                                "{}\nstudy_hash: {}\naxes: [{}]\nmachines:\n",
                                study.file, quoted(study.name), quoted(study.description), identity, axes);
  std::map<std::string, std::string> machines;
  for (const Run& run : study.runs) machines.emplace(run.machine.label, machine_yaml(run.machine));
  for (const auto& [label, yaml] : machines) out += fmt::format("  {}: {}\n", quoted(label), yaml);
  out += "runs:\n";
  for (size_t i = 0; i < study.runs.size(); ++i) {
    const Run& r = study.runs[i];
    const sim::Experiment& e = r.experiment;
    const sim::RunSettings settings = sim::run_settings_of(e);
    out += fmt::format("  - {{index: {}, hash: {}, machine: {}, workload: {}, comm: {}, routing: {}, "
                       "fusion_mb: {:g}, protocol: {}, decode_threads: {}, scaling: {}, images: {}, "
                       "batch: {}, gpus: {}, {}{}{}{}}}\n",
                       i, run_hashes[i], quoted(r.machine.label), quoted(r.config.workload),
                       r.config.comm, settings.routing, settings.fusion_mb, settings.protocol,
                       settings.decode_threads,
                       e.scaling == sim::Scaling::Weak ? "weak" : "strong", e.images, r.config.batch,
                       r.config.gpus,
                       e.samples > 0 ? fmt::format("samples: {}, seed: {}", e.samples, e.seed)
                                     : fmt::format("iterations: {}", e.iterations),
                       e.profile.empty() ? "" : ", profile: " + quoted(e.profile),
                       e.spatial > 1 ? fmt::format(", spatial: {}", e.spatial) : "",
                       e.precision.empty() ? "" : ", precision: " + e.precision);
  }
  return out;
}

ordered_json results_document(const std::string& name, const std::string& identity, size_t runs,
                              const Shard& shard, const std::vector<sim::JsonRow>& rows) {
  ordered_json doc = {{"study", name}, {"study_hash", identity}, {"runs", runs}};
  if (shard.count > 1) doc["shard"] = fmt::format("{}/{}", shard.index, shard.count);
  doc["rows"] = rows;
  return doc;
}

void write_results(const ordered_json& doc, const std::string& out_dir) {
  std::vector<sim::JsonRow> rows(doc["rows"].begin(), doc["rows"].end());
  write_output_file((fs::path(out_dir) / "results.json").string(), doc.dump(1) + "\n", kOut);
  write_output_file((fs::path(out_dir) / "results.csv").string(),
                    sim::rows_csv(rows, sim::RowsOf::Study), kOut);
}

// Copies the shards' cached results (runs/HASH.json, not a killed shard's temporary files) into
// `out_dir`'s cache, each whole or not at all, and removes what a killed merge left there.
void merge_caches(const std::vector<std::string>& shard_dirs, const std::string& out_dir) {
  const fs::path into = fs::path(out_dir) / "runs";
  create_output_folder(into.string(), kOut);
  remove_stale_partial_files(out_dir);
  remove_stale_partial_files(into.string());
  for (const std::string& dir : shard_dirs) {
    const fs::path cache = fs::path(dir) / "runs";
    std::error_code ec;
    if (!fs::is_directory(cache, ec) || fs::equivalent(cache, into, ec)) continue;
    for (fs::directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path to = into / it->path().filename();
      std::error_code absent;
      if (it->path().extension() != ".json" || fs::exists(to, absent)) continue;
      write_output_file(to.string(), read_text(it->path().string()), kOut);
    }
    if (ec) {
      throw ConfigError(Origin{cache.string(), 0}, fmt::format("cannot list it ({}): is this a "
                                                               "sweep's output folder?",
                                                               ec.message()));
    }
  }
}

}  // namespace

sim::OutputRow output_row(const SweepRow& row) {
  return {&row.result, sim::run_settings_of(row.run.experiment),
          sim::StudyPlace{row.index, row.hash, row.run.machine.label}};
}

void write_sweep_outputs(const Study& study, const SweepOutcome& outcome, const Shard& shard,
                         const std::string& out_dir) {
  const std::string identity = identity_of(study, outcome.run_hashes);
  std::vector<sim::JsonRow> rows;
  for (const SweepRow& row : outcome.rows) rows.push_back(sim::row_json(output_row(row)));
  write_output_file((fs::path(out_dir) / "study.yaml").string(),
                    resolved_study_yaml(study, outcome.run_hashes, identity), kOut);
  write_results(results_document(study.name, identity, study.runs.size(), shard, rows), out_dir);
}

void merge_sweep_outputs(const std::vector<std::string>& shard_dirs, const std::string& out_dir) {
  std::string name, identity;
  size_t runs = 0;
  std::map<size_t, sim::JsonRow> by_index;
  for (const std::string& dir : shard_dirs) {
    const std::string path = (fs::path(dir) / "results.json").string();
    const ordered_json doc = ordered_json::parse(read_text(path), nullptr, false);
    if (doc.is_discarded() || !doc.contains("study_hash") || !doc.contains("rows")) {
      throw ConfigError(Origin{path, 0}, "not a sweep's results.json (run `gpuscale sweep` first)");
    }
    if (identity.empty()) {
      name = doc["study"];
      identity = doc["study_hash"];
      runs = doc["runs"];
    } else if (doc["study_hash"] != identity) {
      throw ConfigError(Origin{path, 0}, fmt::format("is another study (or another gpuscale build) "
                                                     "than {}'s: merge shards of one sweep only",
                                                     shard_dirs.front()));
    }
    for (const auto& row : doc["rows"]) {
      const size_t index = row["index"];
      if (!by_index.emplace(index, row).second) {
        throw ConfigError(Origin{path, 0}, fmt::format("run {} is in two shards: give each shard once", index));
      }
    }
  }
  if (by_index.size() != runs) {
    std::string missing;
    for (size_t i = 0; i < runs && missing.size() < 60; ++i) {
      if (!by_index.contains(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    }
    throw ConfigError(Origin{"merge", 0}, fmt::format("the shards hold {} of the study's {} runs "
                                                      "(missing: {}...): give every shard's folder",
                                                      by_index.size(), runs, missing));
  }
  merge_caches(shard_dirs, out_dir);
  const std::string study_yaml = read_text((fs::path(shard_dirs.front()) / "study.yaml").string());
  write_output_file((fs::path(out_dir) / "study.yaml").string(), study_yaml, kOut);
  std::vector<sim::JsonRow> rows;
  for (auto& [index, row] : by_index) rows.push_back(std::move(row));
  write_results(results_document(name, identity, runs, Shard{}, rows), out_dir);
}

}  // namespace gpuscale::sweep
