#include "tools/gpuscale/run_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include "sim/experiment/experiment.hpp"
#include "sim/experiment/experiment_file.hpp"
#include "sim/experiment/result_writer.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay.hpp"
#include "sim/trace/iteration_trace.hpp"
#include "tools/gpuscale/console.hpp"
#include "tools/gpuscale/exchange_options.hpp"
#include "tools/gpuscale/result_text.hpp"
#include "tools/gpuscale/study_text.hpp"
#include "topologies/core/csv.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/output_file.hpp"
#include "topologies/src/topology_config.hpp"
#include "validation/report/timeline_svg.hpp"
#include "validation/src/run_study.hpp"
#include "workloads/interop/chakra_trace.hpp"
#include "workloads/src/spatial_partition.hpp"
#include "workloads/src/precision_recipe.hpp"

namespace gpuscale::cli {
namespace {

struct RunOptions {
  std::string file;          // an experiment YAML; the flags given override its values
  sim::Experiment flags;
  std::string scaling = "strong";
  std::string format = "table";
  std::string trace;         // Chrome / Perfetto trace file
  std::string events;        // the same timeline as CSV, one row per kernel, copy or transfer leg
  std::string timeline;      // the same timeline as an SVG picture
  std::string timeline_window;  // --timeline-window, "FROM:TO" in ms, when given
  std::string export_chakra;  // the iteration as a Chakra trace, PREFIX.RANK.et
  double fusion_mb = 0;      // --fusion-mb, when given
  double fusion_cycle_ms = 0;  // --fusion-cycle-ms, when given
  int decode_threads = 4;    // --decode-threads, when given
  bool strict = false;       // a configuration that does not fit its GPUs' memory is an error
  ExchangeOptions exchange;  // --comm, or --exchange and --algo
};

// The experiment file's settings (or the defaults), then every flag given on the command line.
sim::Experiment experiment_of(const RunOptions& o, const CLI::App& cmd) {
  sim::Experiment e = o.file.empty() ? sim::Experiment{} : sim::load_experiment_file(o.file);
  const sim::Experiment& f = o.flags;
  auto given = [&cmd](const char* flag) { return cmd.count(flag) > 0; };
  if (given("--topology")) e.topology = f.topology;
  if (given("--set")) {
    for (const std::string& assignment : f.topology_overrides)
      sim::add_override(e, assignment, Origin{"--set", 0});
  }
  if (given("--workload")) e.workloads = f.workloads;
  if (given("--gpus")) {
    e.gpus = f.gpus;
    e.gpus_written_at.clear();
  }
  if (given("--batch")) {
    e.batches = f.batches;
    e.global_batch = 0;
  }
  if (given("--global-batch")) {
    e.global_batch = f.global_batch;
    e.global_batch_written_at = Origin{"--global-batch", 0};
  }
  if (given("--accumulate")) e.accumulate = f.accumulate;
  if (std::vector<std::string> names = exchange_names(o.exchange, cmd); !names.empty()) {
    e.comms = std::move(names);
    e.comms_written_at.clear();
  }
  if (given("--routing")) e.routing = f.routing;
  if (given("--scaling")) {
    e.scaling = o.scaling == "weak" ? sim::Scaling::Weak : sim::Scaling::Strong;
  }
  if (given("--images")) e.images = f.images;
  if (given("--fusion-mb")) e.fusion_mb = o.fusion_mb;
  if (given("--fusion-cycle-ms")) e.fusion_cycle_ms = o.fusion_cycle_ms;
  if (given("--decode-threads")) e.decode_threads = o.decode_threads;
  if (given("--input-pipeline")) {
    e.input_pipeline = f.input_pipeline;
    e.input_pipeline_written_at = Origin{"--input-pipeline", 0};
  }
  if (given("--protocol")) e.protocol = f.protocol;
  if (given("--spatial")) {
    e.spatial = f.spatial;
    e.spatial_written_at = f.spatial_written_at;
  }
  if (given("--profile")) e.profile = f.profile;
  if (given("--framework")) e.framework = f.framework;
  if (given("--precision")) {
    e.precision = f.precision;
    e.precision_written_at = Origin{"--precision", 0};
  }
  if (given("--without")) e.without = f.without;
  if (given("--study")) {
    e.study = f.study == "none" ? "" : f.study;
    e.study_written_at = Origin{"--study", 0};
  }
  if (given("--iterations")) {
    e.iterations = f.iterations;
    e.samples = 0;
  }
  if (given("--samples")) e.samples = f.samples;
  if (given("--seed")) {
    if (e.samples == 0) {
      throw ConfigError(Origin{"--seed", 0}, "--seed only matters with --samples (or an "
                                             "experiment's samples): add it or drop --seed");
    }
    e.seed = f.seed;
  }
  e.record_timeline = !o.trace.empty() || !o.events.empty() || !o.timeline.empty();
  return e;
}

// The study an experiment names (`study:`, --study), loaded before anything is simulated.
std::optional<validation::Suite> study_of(const sim::Experiment& e) {
  if (e.study.empty()) return std::nullopt;
  try {
    validation::suite_yaml(e.study);
  } catch (const ConfigError& error) {
    throw ConfigError(e.study_written_at, error.what());  // the line (or flag) that named it
  }
  if (validation::suite_kind(e.study) != validation::SuiteKind::study) {
    throw ConfigError(e.study_written_at,
                      fmt::format("'{}' is a suite of `gpuscale train` layouts or of layer "
                                  "times, not of `run`'s configurations: name a study's suite "
                                  "(a validation/*/suite.yaml without `kind:`)", e.study));
  }
  return validation::load_suite(e.study);
}

// The run table's columns, with the micro-batches per exchange where any row accumulates.
std::vector<sim::ViewColumn> table_view(const std::vector<sim::ResultRow>& rows) {
  std::vector<sim::ViewColumn> view = sim::run_table_view();
  if (std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.accumulate > 1; })) {
    const auto batch = std::find_if(view.begin(), view.end(),
                                    [](const sim::ViewColumn& c) { return c.key == "batch"; });
    view.insert(batch + 1, {"accumulate"});
  }
  return view;
}

// "framework: mxnet; precision: fp32\n": what every row ran under, each once.
std::string framework_legend(const std::vector<sim::ResultRow>& rows) {
  std::vector<std::string> frameworks, precisions;
  for (const sim::ResultRow& r : rows) {
    if (std::find(frameworks.begin(), frameworks.end(), r.framework) == frameworks.end())
      frameworks.push_back(r.framework);
    if (std::find(precisions.begin(), precisions.end(), r.precision) == precisions.end())
      precisions.push_back(r.precision);
  }
  return fmt::format("framework: {}; precision: {}\n", fmt::join(frameworks, ", "),
                     fmt::join(precisions, ", "));
}

void check_writable_folder(const std::string& option, const std::string& path) {
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder)) {
    throw ConfigError(Origin{option, 0}, fmt::format("folder '{}' does not exist: create it or "
                                                     "write the file elsewhere", folder.string()));
  }
}

// `text` as a number when all of it is one ("12", "2.5", "1e3"), else nullopt.
std::optional<double> number_of(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// --timeline-window's "FROM:TO", milliseconds of simulated time, as a window in seconds.
report::TimeWindow timeline_window_of(const std::string& text) {
  const std::string_view window = text;
  const size_t colon = window.find(':');
  std::optional<double> from_ms, to_ms;
  if (colon != std::string_view::npos) {
    from_ms = number_of(window.substr(0, colon));
    to_ms = number_of(window.substr(colon + 1));
  }
  if (!from_ms || !to_ms || !(*from_ms >= 0) || !(*to_ms > *from_ms) || !std::isfinite(*to_ms)) {
    throw ConfigError(Origin{"--timeline-window", 0},
                      fmt::format("'{}' is not a window: write FROM:TO, milliseconds of simulated "
                                  "time with 0 <= FROM < TO (e.g. 120:180)", text));
  }
  return {*from_ms * 1e-3, *to_ms * 1e-3};
}

// Each configuration's timeline, titled for the trace's processes and the picture's panels.
std::vector<sim::Timeline> titled_timelines(const std::vector<sim::ResultRow>& rows) {
  std::vector<sim::Timeline> timelines;
  for (const sim::ResultRow& r : rows) {
    sim::Timeline t = r.timeline;
    t.title = fmt::format("{} {} {} GPUs batch {}", r.workload, r.comm, r.gpus, r.batch);
    timelines.push_back(std::move(t));
  }
  return timelines;
}

// Every event of every configuration's timeline, in time order within each configuration: which
// layer's kernels and which exchange ran when, for scripts and spreadsheets.
std::string events_csv(const std::vector<sim::ResultRow>& rows) {
  std::string out = csv_record({"workload", "comm", "gpus", "batch", "track", "category", "name",
                                "layer", "algorithm", "bytes", "start_s", "end_s"});
  for (const sim::ResultRow& r : rows) {
    std::vector<const sim::TimelineEvent*> events;
    for (const sim::TimelineEvent& e : r.timeline.events) events.push_back(&e);
    std::stable_sort(events.begin(), events.end(), [](const auto* a, const auto* b) {
      return a->start_s < b->start_s;
    });
    for (const sim::TimelineEvent* e : events) {
      out += csv_record({r.workload, r.comm, std::to_string(r.gpus), std::to_string(r.batch),
                         e->track, e->category, e->name, e->layer, e->algorithm,
                         e->bytes > 0 ? fmt::format("{:.0f}", e->bytes) : "",
                         fmt::format("{:.9g}", e->start_s), fmt::format("{:.9g}", e->end_s)});
    }
  }
  return out;
}

// Whether the run sampled variability (--samples): every row did, or none.
bool sampled(const std::vector<sim::ResultRow>& rows) {
  return !rows.empty() && rows.front().spread.samples > 0;
}

// The rows as CSV, as the result schema writes them (sim/experiment/result_schema.hpp).
std::string results_csv(const std::vector<sim::OutputRow>& rows) {
  std::vector<sim::JsonRow> json_rows;
  for (const sim::OutputRow& row : rows) json_rows.push_back(sim::row_json(row));
  return sim::rows_csv(json_rows, sim::RowsOf::Run);
}

// "resnet-50 p2p 8 GPUs batch 100000 needs 15728.07 GB on a GPU of 16 GB".
std::string memory_shortfall(const sim::ResultRow& r) {
  return fmt::format("{} {} {} GPUs batch {} needs {:.2f} GB on a GPU of {:.4g} GB", r.workload,
                     r.comm, r.gpus, r.batch, std::max(r.memory_gpu0_gb, r.memory_max_other_gb),
                     r.gpu_memory_gb);
}

// Every configuration that could not have trained is named on stderr, or, with --strict, is an
// error before anything is written.
void check_memory(const std::vector<sim::ResultRow>& rows, bool strict) {
  for (const sim::ResultRow& r : rows) {
    if (r.fits_memory()) continue;
    if (strict) {
      throw ConfigError(Origin{"--strict", 0}, memory_shortfall(r) + ": lower --batch or use GPUs "
                                                                     "with more memory");
    }
    warning(memory_shortfall(r) + ": it would not fit (the table marks it; --strict makes it "
                                  "an error)");
  }
}

// Says so before a configuration that takes the simulator minutes (once per method and GPU
// count, whatever the workloads); whether any does.
bool warn_of_slow_configurations(const sim::Experiment& e) {
  std::set<std::pair<std::string, int>> slow;
  for (const std::string& workload : e.workloads) {
    const sim::Experiment one = sim::for_workload(e, workload);
    for (const sim::ExchangeChoice& exchange : sim::exchanges_of(one, sim::framework_of(one))) {
      for (int gpus : e.gpus) {
        const std::string reason = sim::slow_simulation_reason(exchange, gpus);
        if (reason.empty() || !slow.emplace(exchange.name, gpus).second) continue;
        warning(fmt::format("{} on {} GPUs {}", exchange.name, gpus, reason));
      }
    }
  }
  return !slow.empty();
}

// --export-chakra's graph: the experiment's one configuration's iteration (iteration_trace.hpp).
interop::TraceGraph exported_iteration(const sim::Experiment& e, const std::string& prefix) {
  check_writable_folder("--export-chakra", prefix);
  const size_t configurations = e.workloads.size() * e.comms.size() * e.batches.size() * e.gpus.size();
  if (configurations != 1) {
    throw ConfigError(Origin{"--export-chakra", 0},
                      fmt::format("writes the iteration of one configuration, and this run has "
                                  "{}: give one --workload, --comm, --batch and --gpus",
                                  configurations));
  }
  return sim::iteration_trace(e, {e.workloads[0], e.comms[0], e.batches[0], e.gpus[0]});
}

void run(const RunOptions& o, const CLI::App& cmd) {
  const sim::Experiment experiment = experiment_of(o, cmd);
  // Before minutes of simulation.
  const std::optional<interop::TraceGraph> exported =
      o.export_chakra.empty() ? std::nullopt
                              : std::optional(exported_iteration(experiment, o.export_chakra));
  if (!o.trace.empty()) check_writable_folder("--trace", o.trace);
  if (!o.events.empty()) check_writable_folder("--events", o.events);
  if (!o.timeline.empty()) check_writable_folder("--timeline", o.timeline);
  const report::TimeWindow window = cmd.count("--timeline-window") > 0
                                        ? timeline_window_of(o.timeline_window)
                                        : report::TimeWindow{};
  const std::optional<validation::Suite> study = study_of(experiment);
  const bool slow = warn_of_slow_configurations(experiment);
  const bool chatty = slow || experiment.workloads.size() * experiment.comms.size() *
                                      experiment.batches.size() * experiment.gpus.size() > 1;
  const auto rows = sim::run_experiment(experiment, [&](int done, int total, const sim::ResultRow& r) {
    if (chatty) {
      progress(progress_line(done, total, r));
    }
  });
  check_memory(rows, o.strict);
  if (sampled(rows) && !rows.front().spread.machine_varies) {
    warning("the machine names no variability, so every sample is the same: add a "
            "`variability:` section to its file (docs/variability.md)");
  }
  // Rendered whole before printing: an error never leaves half an output behind.
  std::string out;
  const std::vector<sim::OutputRow> output = sim::output_rows(rows, experiment);
  const std::optional<validation::RunStudy> beside =
      study ? std::optional(validation::compare_run_with_study(*study, experiment, rows))
            : std::nullopt;
  if (o.format == "json") {
    nlohmann::ordered_json doc = sim::results_json(output, experiment);
    if (beside) add_study_json(doc, *beside);
    out = doc.dump(2) + "\n";
  } else if (o.format == "csv") {
    out = results_csv(output);
  } else {
    out = fmt::format("{} (strong = fixed {} images per epoch; speedup against the same method "
                      "on 1 GPU)\n",
                      rows.empty() ? "" : rows[0].topology,
                      experiment.images > 0 ? std::to_string(experiment.images) : "dataset");
    out += "iter ms = FP+BP + WU + input + rest on GPU0 (rest: waiting for the host or a slower "
           "GPU, less any forward run during the previous WU)\n";
    if (experiment.global_batch > 0 || experiment.accumulate > 1) {
      out += fmt::format("{}batch = samples per GPU in each micro-batch; accum = micro-batches per "
                         "exchange (gradient accumulation: all but the last skip the exchange "
                         "and the update)\n",
                         experiment.global_batch > 0
                             ? fmt::format("global batch {} per exchange, shared by the GPUs: ",
                                           experiment.global_batch)
                             : "");
    }
    if (experiment.input_pipeline == "dali") {
      out += "input: DALI's pipeline, images decoded on the GPUs (its decode threads, per GPU, "
             "only Huffman-decode; docs/gpu-input-pipeline-sources.md)\n";
    }
    if (experiment.spatial > 1) {
      const wl::SpatialSplit split = wl::spatial_split(experiment.spatial);
      out += fmt::format("spatial: each sample split over {} GPUs ({}x{} blocks, halo exchange), "
                         "so batch = samples per group of {}; 1 GPU holds whole samples\n",
                         split.ways(), split.rows, split.cols, split.ways());
    }
    out += "\n";
    std::vector<const sim::ResultRow*> listed;
    for (const sim::ResultRow& r : rows) listed.push_back(&r);
    out += exchange_legend(listed) + framework_legend(rows) + "\n";
    const std::string table = sim::rows_table(output, table_view(rows), true);
    out += beside ? with_study_columns(table, *beside) + study_footer(*beside) : table;
    if (sampled(rows)) {
      out += fmt::format("\nvariability: {} sampled iterations per configuration, seed {} "
                         "(docs/variability.md); spd = speedup against the mean of 1 GPU, eff = "
                         "spd / gpus\n\n",
                         rows.front().spread.samples, experiment.seed);
      out += sim::rows_table(output, sim::spread_table_view(), true);
    }
    if (exported) {
      out += fmt::format("\nchakra trace: {}.0.et .. {}.{}.et, {} nodes per GPU (its GPU work and "
                         "collectives; docs/interop.md)\n",
                         o.export_chakra, o.export_chakra, experiment.gpus[0] - 1,
                         exported->nodes.size());
    }
  }
  if (!o.trace.empty()) {
    write_output_file(o.trace, sim::chrome_trace_json(titled_timelines(rows)),
                      Origin{"--trace", 0});
  }
  if (!o.events.empty()) write_output_file(o.events, events_csv(rows), Origin{"--events", 0});
  if (!o.timeline.empty()) {
    write_output_file(o.timeline, report::timeline_svg(titled_timelines(rows), window),
                      Origin{"--timeline", 0});
  }
  if (exported) interop::write_chakra_trace(*exported, o.export_chakra, experiment.gpus[0]);
  std::cout << out;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  sim::Experiment& e = o->flags;
  auto* cmd = app.add_subcommand("run", "Simulate data-parallel training: time per iteration and "
                                        "epoch, speedup, FP+BP/WU, memory");
  cmd->add_option("experiment", o->file, "An experiment YAML (docs/experiments.md); flags given "
                                         "override its values")
      ->check(CLI::ExistingFile);
  cmd->add_option("--topology", e.topology, "A shipped machine or a .yaml file")->capture_default_str();
  cmd->add_option("--workload", e.workloads, "Models, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--gpus", e.gpus, "GPU counts, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  auto* batch = cmd->add_option("--batch", e.batches,
                                "Samples per GPU per iteration (per micro-batch with "
                                "--accumulate), comma-separated")
                    ->delimiter(',')
                    ->check(CLI::Range(1, 1 << 20))
                    ->capture_default_str();
  cmd->add_option("--global-batch", e.global_batch,
                  "Strong scaling at a fixed global batch: samples per exchange over all GPUs, "
                  "each GPU count running its share (in micro-batches where a share does not "
                  "fit the GPUs' memory: gradient accumulation)")
      ->check(CLI::Range(1L, 1L << 30))
      ->excludes(batch);
  cmd->add_option("--accumulate", e.accumulate,
                  "Micro-batches per exchange (gradient accumulation: all but the last skip the "
                  "exchange); with --batch each is a batch, with --global-batch they split the "
                  "share (default: 1, or the fewest that fit)")
      ->check(CLI::Range(1, 1024));
  add_exchange_options(*cmd, o->exchange, "p2p,nccl", true);
  cmd->add_option("--routing", e.routing, "Route GPU pairs without NVLink this way")
      ->check(CLI::IsMember(topo::routing_mode_names()));
  cmd->add_option("--scaling", o->scaling, "strong: fixed images per epoch; weak: images x GPUs")
      ->check(CLI::IsMember({"strong", "weak"}))
      ->capture_default_str();
  cmd->add_option("--images", e.images, "Images per epoch (default: the dataset's)")
      ->check(CLI::Range(1L, 1L << 40));
  cmd->add_option("--fusion-mb", o->fusion_mb, "Allreduce methods' buffer, MB: Horovod's fusion "
                                               "buffer or DDP's bucket cap (default: the "
                                               "framework's; 0: one allreduce per tensor)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--fusion-cycle-ms", o->fusion_cycle_ms, "Horovod's cycle, ms, for frameworks "
                                                         "that fuse on a cycle (default: the "
                                                         "framework's, 5; 0: no sleep, a buffer "
                                                         "goes as soon as the previous is done)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--decode-threads", o->decode_threads, "Threads decoding and augmenting the "
                                                         "input for all GPUs of a process "
                                                         "(default: the framework's)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--input-pipeline", e.input_pipeline,
                  "Where images are decoded: cpu (the framework's own pipeline) or dali (DALI's "
                  "nvJPEG decoder: Huffman on the decode threads, the rest on the GPU; "
                  "--decode-threads is then per GPU)")
      ->check(CLI::IsMember(sim::input_pipeline_names()));
  cmd->add_option("--spatial", e.spatial, "Spatial parallelism: split each sample over this many "
                                          "GPUs (halo exchange; docs/replay.md); --batch is then "
                                          "the samples of each group")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--protocol", e.protocol, "NCCL protocol")
      ->check(CLI::IsMember(sim::protocol_choice_names()))
      ->capture_default_str();
  cmd->add_option("--framework", e.framework, "How iterations execute: a shipped framework or a "
                                              "file (workloads/frameworks); default: each "
                                              "workload's own, the one its file names "
                                              "(`framework:`), else mxnet");
  cmd->add_option("--precision", e.precision, "Precision recipe, as the framework runs it: fp32, "
                                              "tf32, amp, fp16, bf16 or fp8 (default: the "
                                              "workload's; docs/compute-model.md)")
      ->check(CLI::IsMember(wl::precision_recipe_names()));
  cmd->add_option("--without", e.without, "Mechanisms left out, comma-separated: engine (engine "
                                          "ops, launches, syncs), host (the Python thread), "
                                          "input (the input pipeline), setup (per-run costs), "
                                          "coordination (Horovod's negotiation each cycle), "
                                          "handover (PyTorch's gradients reach Horovod when "
                                          "issued, not computed)")
      ->delimiter(',')
      ->check(CLI::IsMember(sim::mechanism_names()));
  cmd->add_option("--profile", e.profile, "Measured per-layer times (docs/compute-model.md)");
  auto* iterations =
      cmd->add_option("--iterations", e.iterations, "Iterations simulated (the first warms up)")
          ->check(CLI::Range(2, 100))
          ->capture_default_str();
  cmd->add_option("--samples", e.samples,
                  "Sample the machine's variability (docs/variability.md): iterations simulated "
                  "after a warm-up one, each drawn anew; prints the mean and 10th, 50th and 90th "
                  "percentiles")
      ->check(CLI::Range(1, sim::kMaxSamples))
      ->excludes(iterations);
  cmd->add_option("--seed", e.seed, "The seed of --samples' draws: same seed, same output")
      ->capture_default_str();
  cmd->add_option("--set", e.topology_overrides,
                  "Override a value of the machine, KEY.PATH=VALUE (gpus.KEY: every GPU), or of "
                  "every workload, workload.KEY.PATH=VALUE (workload.input.height=96)")
      ->allow_extra_args(false);
  cmd->add_option("--study", e.study, "A validation suite (validation/NAME or a suite folder) "
                                      "whose measurements are printed beside the rows, with "
                                      "the error of each prediction; none: no study (default: "
                                      "the experiment file's `study:`)");
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_flag("--strict", o->strict, "Fail when a configuration does not fit its GPUs' memory "
                                      "(default: a warning and a NO in the fits column)");
  cmd->add_option("--trace", o->trace, "Write a Chrome/Perfetto timeline (JSON) of every "
                                       "configuration: kernels and copies per GPU, transfers "
                                       "per link");
  cmd->add_option("--events", o->events, "Write the timeline as CSV: every kernel (its layer and "
                                         "algorithm), copy and link transfer (bytes) with its "
                                         "start and end, per configuration");
  auto* timeline = cmd->add_option("--timeline", o->timeline,
                                   "Write the timeline as an SVG picture: a panel per "
                                   "configuration, a row per GPU's kernels and copies and per "
                                   "link direction, coloured by category");
  cmd->add_option("--timeline-window", o->timeline_window,
                  "The stretch of simulated time --timeline draws, FROM:TO in milliseconds "
                  "(default: the whole run)")
      ->needs(timeline);
  cmd->add_option("--export-chakra", o->export_chakra,
                  "Write the iteration of the run's one configuration as a Chakra trace, "
                  "PREFIX.RANK.et for each GPU: kernels, collectives, updates (docs/interop.md)");
  cmd->callback([o, cmd] { run(*o, *cmd); });
}

}  // namespace gpuscale::cli
