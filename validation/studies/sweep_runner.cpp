#include "validation/studies/sweep_runner.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <system_error>

#include "sim/engine/isolated.hpp"
#include "sim/experiment/result_row_codec.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/core/output_file.hpp"
#include "validation/studies/process_pool.hpp"
#include "validation/studies/run_hash.hpp"

namespace gpuscale::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string cache_path(const std::string& out_dir, const std::string& hash) {
  return (fs::path(out_dir) / "runs" / (hash + ".json")).string();
}

// A cached result: the run's row (sim::simulate_configuration), by ResultRow's one codec
// (sim/experiment/result_row_codec.hpp), under the run's hash.
struct Cached {
  bool damaged = false;               // a file is there, but no whole result of the run
  std::optional<sim::ResultRow> result;
};

// A file that holds no whole result of its run (cut short by a crash outside gpuscale's
// whole-or-nothing writes, edited, foreign) is damaged: the run is simulated again and the file
// replaced.
Cached read_cached(const std::string& path, const std::string& hash) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return {};
  std::ifstream in(path);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!in || j.is_discarded() || !j.is_object() || !j.contains("hash") || j["hash"] != hash ||
      !j.contains("result")) {
    return {true, std::nullopt};
  }
  try {
    return {false, j["result"].get<sim::ResultRow>()};
  } catch (const json::exception&) {
    return {true, std::nullopt};
  }
}

Run on_one_gpu(Run run) {
  run.config.gpus = 1;
  run.experiment.gpus = {1};
  return run;
}

}  // namespace

std::string describe(const Run& run) {
  const sim::Experiment& e = run.experiment;
  const wl::FrameworkConfig framework = sim::framework_of(e);
  std::string text = fmt::format("{} {} {} ({}) {} GPUs batch {}", run.machine.label,
                                 run.config.workload, run.config.comm,
                                 sim::exchange_of(e, framework, run.config.comm)->describe(),
                                 run.config.gpus, run.config.batch);
  if (!e.routing.empty()) text += " routing " + e.routing;
  return text;
}

SweepOutcome run_sweep(const Study& study, const SweepOptions& options,
                       const std::function<void(const SweepProgress&)>& progress,
                       const std::function<void(const std::string&)>& warn) {
  const std::string fingerprint = build_fingerprint();
  SweepOutcome outcome;
  for (const Run& run : study.runs) outcome.run_hashes.push_back(run_hash(run, fingerprint));
  // The shard's runs, then the one-GPU runs their speedups need, each hash once.
  std::vector<size_t> mine;
  for (size_t i = 0; i < study.runs.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(options.shard.count)) == options.shard.index) {
      mine.push_back(i);
    }
  }
  std::vector<Run> tasks;
  std::vector<std::string> task_hash;
  std::map<std::string, size_t> task_of_hash;
  auto need = [&](const Run& run, const std::string& hash) {
    if (task_of_hash.emplace(hash, tasks.size()).second) {
      tasks.push_back(run);
      task_hash.push_back(hash);
    }
    return hash;
  };
  std::vector<std::pair<std::string, std::string>> row_hashes;  // (run, its one-GPU run)
  for (size_t i : mine) {
    const Run one_gpu = on_one_gpu(study.runs[i]);
    row_hashes.emplace_back(need(study.runs[i], outcome.run_hashes[i]),
                            need(one_gpu, run_hash(one_gpu, fingerprint)));
  }

  std::map<std::string, sim::ResultRow> result_of_hash;
  std::vector<size_t> to_simulate;
  for (size_t t = 0; t < tasks.size(); ++t) {
    const std::string path = cache_path(options.out_dir, task_hash[t]);
    const Cached cached = read_cached(path, task_hash[t]);
    if (cached.result) {
      result_of_hash[task_hash[t]] = *cached.result;
      continue;
    }
    if (cached.damaged && warn) {
      warn(fmt::format("{} holds no whole result of run {}: simulating it again", path,
                       describe(tasks[t])));
    }
    to_simulate.push_back(t);
  }
  SweepProgress state{0, to_simulate.size(), tasks.size() - to_simulate.size()};
  if (progress) progress(state);
  const std::string cache_dir = (fs::path(options.out_dir) / "runs").string();
  create_output_folder(cache_dir, Origin{"--out", 0});
  remove_stale_partial_files(options.out_dir);
  remove_stale_partial_files(cache_dir);
  run_in_processes(
      to_simulate.size(), options.jobs,
      [&](size_t k) {
        const Run& run = tasks[to_simulate[k]];
        try {
          return sim::encode_result(sim::simulate_configuration(run.experiment, run.config));
        } catch (const std::exception& e) {
          throw ConfigError({}, fmt::format("run {}: {}", describe(run), e.what()));
        }
      },
      [&](size_t k, const std::string& result) {
        const std::string& hash = task_hash[to_simulate[k]];
        const auto row = sim::decode_result<sim::ResultRow>(result);
        const json entry = {
            {"hash", hash}, {"run", describe(tasks[to_simulate[k]])}, {"result", row}};
        write_output_file(cache_path(options.out_dir, hash), entry.dump() + "\n",
                          Origin{"--out", 0});
        result_of_hash[hash] = row;
        ++state.finished;
        if (progress) progress(state);
      });

  outcome.simulated = to_simulate.size();
  outcome.cached = state.cached;
  for (size_t k = 0; k < mine.size(); ++k) {
    const Run& run = study.runs[mine[k]];
    const auto& [hash, one_gpu_hash] = row_hashes[k];
    SweepRow row{mine[k], hash, run, result_of_hash.at(hash)};
    sim::set_speedup(row.result, run.experiment.scaling, result_of_hash.at(one_gpu_hash).epoch_s);
    outcome.rows.push_back(std::move(row));
  }
  return outcome;
}

}  // namespace gpuscale::sweep
