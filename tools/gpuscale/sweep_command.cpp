#include "tools/gpuscale/sweep_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <thread>

#include "sim/experiment/result_writer.hpp"
#include "tools/gpuscale/console.hpp"
#include "tools/gpuscale/result_text.hpp"
#include "topologies/core/error.hpp"
#include "validation/report/sweep_plots.hpp"
#include "validation/studies/output_lock.hpp"
#include "validation/studies/study_loader.hpp"
#include "validation/studies/sweep_output.hpp"
#include "validation/studies/sweep_runner.hpp"
#include "workloads/src/precision_recipe.hpp"

namespace gpuscale::cli {
namespace {

struct SweepCommandOptions {
  std::string study;
  std::string out;  // default: sweep-NAME in the working directory
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string shard = "0/1";
  std::string format = "table";
  std::string plot_dir;
  std::string precision;  // every run's recipe, over the study's
  std::vector<std::string> merge_dirs;
  std::string merge_out;
};

sweep::Shard parse_shard(const std::string& text) {
  int index = -1, count = 0;
  char slash = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &index, &slash, &count, &extra) != 3 || slash != '/' ||
      count < 1 || index < 0 || index >= count) {
    throw ConfigError(Origin{"--shard", 0}, fmt::format("'{}' is not a shard: give i/N with 0 <= i < "
                                                        "N (e.g. 0/4 for the first of four)", text));
  }
  return {index, count};
}

// A bar on a terminal, a line per finished run elsewhere (a log file, a Slurm job's output).
void show_progress(const sweep::SweepProgress& p) {
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (terminal) {
    constexpr int kWidth = 30;
    const int filled = p.to_simulate == 0 ? kWidth : static_cast<int>(kWidth * p.finished / p.to_simulate);
    std::cerr << fmt::format("\r[{:<{}}] {}/{} simulated, {} cached", std::string(filled, '#'), kWidth,
                             p.finished, p.to_simulate, p.cached)
              << (p.finished == p.to_simulate ? "\n" : "") << std::flush;
  } else if (p.finished > 0 || p.to_simulate == 0) {
    progress(fmt::format("[{}/{}] simulated ({} cached)", p.finished, p.to_simulate, p.cached));
  }
}

// The varied axes, as the rows hold them, then what was predicted: one line per run. An axis of
// numbers (gpus, spatial, batch) is right-aligned and one of names (machine, comm) left-aligned,
// its header with its values, so that digits line up under each other.
std::string sweep_table(const sweep::Study& study, const std::vector<sim::OutputRow>& rows) {
  std::vector<std::string> axes = study.axes;
  if (axes.empty()) axes = {"machine", "workload", "comm", "gpus"};
  std::vector<sim::ViewColumn> view;
  for (const std::string& axis : axes) view.push_back({.key = axis, .as_written = true});
  const auto& measures = sim::sweep_table_measures();
  view.insert(view.end(), measures.begin(), measures.end());
  return sim::rows_table(rows, view, false);
}

void run_study(const SweepCommandOptions& o) {
  sweep::Study study = sweep::load_study_file(o.study);
  if (!o.precision.empty()) sweep::set_study_precision(study, o.precision, Origin{"--precision", 0});
  sweep::SweepOptions options;
  options.out_dir = o.out.empty() ? "sweep-" + study.name : o.out;
  options.jobs = o.jobs;
  options.shard = parse_shard(o.shard);
  const sweep::OutputFolderLock lock(options.out_dir);
  const sweep::SweepOutcome outcome =
      sweep::run_sweep(study, options, show_progress, [](const std::string& w) { warning(w); });
  sweep::write_sweep_outputs(study, outcome, options.shard, options.out_dir);
  const auto figures = o.plot_dir.empty() ? std::vector<std::string>{}
                                          : report::write_sweep_plots(study, outcome.rows, o.plot_dir);
  std::vector<sim::OutputRow> rows;
  std::vector<sim::JsonRow> json_rows;
  std::vector<const sim::ResultRow*> results;
  for (const sweep::SweepRow& row : outcome.rows) {
    rows.push_back(sweep::output_row(row));
    json_rows.push_back(sim::row_json(rows.back()));
    results.push_back(&row.result);
  }
  const auto too_big = std::count_if(results.begin(), results.end(),
                                     [](const sim::ResultRow* r) { return !r->fits_memory(); });
  if (too_big > 0) {
    warning(fmt::format("{} of {} runs need more memory than their GPUs have (fits_memory "
                        "false, NO in the table)", too_big, rows.size()));
  }
  if (o.format == "json") {
    std::cout << sim::JsonRow(json_rows).dump(1) << "\n";
  } else if (o.format == "csv") {
    std::cout << sim::rows_csv(json_rows, sim::RowsOf::Study);
  } else {
    std::cout << fmt::format("{}: {} runs ({} simulated, {} cached) -> {}/results.csv\n\n", study.name,
                             rows.size(), outcome.simulated, outcome.cached, options.out_dir)
              << exchange_legend(results) << "\n" << sweep_table(study, rows);
    if (!figures.empty()) std::cout << fmt::format("\nwrote {} figures to {}\n", figures.size(), o.plot_dir);
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepCommandOptions>();
  auto* cmd = app.add_subcommand("sweep", "Run a study: runs varied along axes (machines, models, "
                                          "GPUs, batches, methods), in parallel, cached, resumable");
  cmd->add_option("study", o->study, "A study file (docs/sweeps.md)")->check(CLI::ExistingFile);
  cmd->add_option("--out", o->out, "Output folder: results.csv/json, study.yaml, the run cache "
                                   "(default: sweep-NAME)");
  cmd->add_option("--jobs,-j", o->jobs, "Simulations at once (default: the machine's cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--shard", o->shard, "Run every N-th run only, from the i-th (0-based): i/N")
      ->capture_default_str();
  cmd->add_option("--plot", o->plot_dir, "Write SVG figures that fit the study's axes into this "
                                       "folder (speedup, efficiency, breakdown, memory, link heat "
                                       "maps)");
  cmd->add_option("--precision", o->precision, "Train every run at this precision recipe, as "
                                               "its framework runs it (over the study's own)")
      ->check(CLI::IsMember(wl::precision_recipe_names()));
  cmd->add_option("--format", o->format, "What to print")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->callback([o, cmd] {
    if (cmd->got_subcommand("merge")) return;
    if (o->study.empty()) {
      throw ConfigError(Origin{"sweep", 0}, "give a study file (gpuscale sweep STUDY.yaml) or "
                                            "`sweep merge DIR...`");
    }
    run_study(*o);
  });
  auto* merge = cmd->add_subcommand("merge", "Join the output folders of a study's shards");
  merge->add_option("dirs", o->merge_dirs, "The shards' output folders")
      ->required()
      ->check(CLI::ExistingDirectory);
  merge->add_option("--out", o->merge_out, "Folder for the merged outputs")->required();
  merge->callback([o] {
    const sweep::OutputFolderLock lock(o->merge_out);
    sweep::merge_sweep_outputs(o->merge_dirs, o->merge_out);
    std::cout << fmt::format("merged {} shards into {}/results.csv\n", o->merge_dirs.size(), o->merge_out);
  });
}

}  // namespace gpuscale::cli
