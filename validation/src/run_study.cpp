#include "validation/src/run_study.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "sim/exchange/exchange_choice.hpp"
#include "validation/src/metrics.hpp"
#include "validation/src/predictions.hpp"
#include "validation/src/report.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::validation {
namespace {

// A shipped name or a file's path, as both sides may write it ("mxnet", "../mxnet.yaml").
std::string stem(const std::string& name_or_path) {
  return std::filesystem::path(name_or_path).stem().string();
}

bool has_stem(const std::vector<std::string>& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return stem(n) == stem(name); });
}

bool reads_input(const sim::Experiment& e) {
  return std::find(e.without.begin(), e.without.end(), "input") == e.without.end();
}

// Whether the run reads the study as `reading` does: it has every setting the reading changes
// (a batch over all GPUs together is a global batch).
bool follows(const Suite& suite, const sim::Experiment& e, const SetupAlternative& reading) {
  if (reading.batch_total && *reading.batch_total != (e.global_batch > 0)) return false;
  if (reading.decode_threads && e.decode_threads != reading.decode_threads) return false;
  if (reading.fusion_mb && e.fusion_mb != reading.fusion_mb) return false;
  if (reading.synthetic_data && reads_input(e) == *reading.synthetic_data) return false;
  for (const auto& [network, workload] : reading.networks) {
    if (!has_stem(e.workloads, workload)) return false;
  }
  for (const auto& [method, comm] : reading.methods) {
    if (std::find(e.comms.begin(), e.comms.end(), comm) == e.comms.end()) return false;
  }
  for (const auto& [network, framework] : reading.frameworks) {
    if (stem(sim::framework_name_for(e, suite.workload_of(network))) != stem(framework))
      return false;
  }
  return true;
}

// `names` with each one whose stem `to` maps replaced; nullopt if none is.
std::optional<std::string> replaced(std::vector<std::string> names,
                                    const std::map<std::string, std::string>& to) {
  bool any = false;
  for (std::string& name : names) {
    if (const auto it = to.find(stem(name)); it != to.end()) name = it->second, any = true;
  }
  if (!any) return std::nullopt;
  return fmt::format("{}", fmt::join(names, ","));
}

// The flags that make this run read the study as `reading` does; empty, with `why_not` set,
// where `run` has no such setting.
std::string selection(const Suite& suite, const sim::Experiment& e,
                      const SetupAlternative& reading, std::string& why_not) {
  std::vector<std::string> flags;
  if (reading.batch_total && *reading.batch_total) {
    if (e.global_batch == 0 && e.batches.size() != 1) {
      why_not = "a global batch per run: run each of the batches with --global-batch B in place "
                "of --batch";
      return "";
    }
    flags.push_back(fmt::format("--global-batch {} in place of --batch",
                                e.global_batch > 0 ? e.global_batch : e.batches.front()));
  } else if (reading.batch_total) {
    flags.push_back(fmt::format("--batch {} in place of --global-batch",
                                e.global_batch > 0 ? e.global_batch : e.batches.front()));
  }
  if (reading.decode_threads)
    flags.push_back(fmt::format("--decode-threads {}", *reading.decode_threads));
  if (reading.fusion_mb) flags.push_back(fmt::format("--fusion-mb {:g}", *reading.fusion_mb));
  if (reading.synthetic_data) {
    flags.push_back(*reading.synthetic_data ? "--without input" : "input left out of --without");
  }
  if (!reading.networks.empty()) {
    std::map<std::string, std::string> to;
    for (const auto& [network, workload] : reading.networks)
      to[stem(suite.workload_of(network))] = workload;
    const auto workloads = replaced(e.workloads, to);
    if (!workloads) {
      why_not = "it changes no workload of this run";
      return "";
    }
    flags.push_back("--workload " + *workloads);
  }
  if (!reading.methods.empty()) {
    std::map<std::string, std::string> to;
    for (const auto& [method, comm] : reading.methods) to[suite.comm_of(method)] = comm;
    const auto comms = replaced(e.comms, to);
    if (!comms) {
      why_not = "it changes no exchange of this run";
      return "";
    }
    flags.push_back("--comm " + *comms);
  }
  for (const auto& [network, framework] : reading.frameworks)
    flags.push_back("--framework " + framework);
  return fmt::format("{}", fmt::join(flags, " "));
}

// The headline's values of the settings some reading varies and none of `followed` changes, in
// words.
std::string headline_text(const Suite& suite, const wl::FrameworkConfig& framework,
                          const std::vector<SetupAlternative>& followed) {
  const Setup& s = suite.setup;
  auto changed = [&](auto&& changes) {
    return std::any_of(followed.begin(), followed.end(), changes);
  };
  std::vector<std::string> parts;
  auto add = [&parts](std::string part) {
    if (std::find(parts.begin(), parts.end(), part) == parts.end())
      parts.push_back(std::move(part));
  };
  for (const SetupAlternative& r : s.alternatives) {
    if (r.batch_total && !changed([](const auto& f) { return f.batch_total.has_value(); }))
      add(s.batch_total ? "batch per all GPUs together" : "batch per GPU");
    if (r.decode_threads && !changed([](const auto& f) { return f.decode_threads.has_value(); })) {
      add(s.decode_threads ? fmt::format("{} decode threads", *s.decode_threads)
                           : fmt::format("{}'s {} decode threads", framework.name,
                                         framework.input.decode_threads));
    }
    if (r.fusion_mb && !changed([](const auto& f) { return f.fusion_mb.has_value(); })) {
      add(s.fusion_mb ? fmt::format("fusion buffer {:g} MB", *s.fusion_mb)
                      : fmt::format("{}'s fusion buffer", framework.name));
    }
    if (r.synthetic_data && !changed([](const auto& f) { return f.synthetic_data.has_value(); })) {
      add(s.synthetic_data ? "synthetic data (no input pipeline)"
                           : "the dataset read through the input pipeline");
    }
    for (const auto& [network, workload] : r.networks) {
      if (!changed([&](const auto& f) { return f.networks.contains(network); }))
        add(fmt::format("{} = {}", network, suite.workload_of(network)));
    }
    for (const auto& [method, comm] : r.methods) {
      if (!changed([&](const auto& f) { return f.methods.contains(method); }))
        add(fmt::format("{} = {}", method, suite.comm_of(method)));
    }
    for (const auto& [network, f] : r.frameworks) {
      if (!changed([&](const auto& g) { return g.frameworks.contains(network); }))
        add(fmt::format("{} under {}", network, stem(suite.framework_of(network))));
    }
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

// What the run changes of the study's setup (as the readings it follows have it): `framework`
// is the setup's, `frameworks` the names of every framework the study ran under.
std::vector<std::string> departures_of(const Suite& suite, const sim::Experiment& e,
                                       const wl::FrameworkConfig& framework,
                                       const std::set<std::string>& frameworks,
                                       const std::vector<sim::ResultRow>& rows) {
  const Setup& s = suite.setup;
  std::vector<std::string> out;
  if (!e.topology_overrides.empty()) {
    out.push_back(fmt::format("the machine is changed by --set ({}): the errors are a what-if's",
                              fmt::join(e.topology_overrides, ", ")));
  }
  if (!e.workload_overrides.empty()) {
    out.push_back(fmt::format("the workloads are changed by --set ({}): the errors are a "
                              "what-if's",
                              fmt::join(e.workload_overrides, ", ")));
  }
  if ((e.global_batch > 0) != s.batch_total) {
    out.push_back(e.global_batch > 0 ? "a global batch, where the study's batches are per GPU"
                                     : "batches per GPU, where the study's are over all GPUs "
                                       "together (--global-batch)");
  }
  std::set<std::string> others;
  for (const sim::ResultRow& row : rows) {
    if (!frameworks.contains(row.framework)) others.insert(row.framework);
  }
  if (!others.empty()) {
    out.push_back(fmt::format("rows under {} are not compared: the study ran under {}",
                              fmt::join(others, ", "), fmt::join(frameworks, ", ")));
  }
  // The settings of the setup's framework, as the run has them for a workload under it.
  const auto under_setup = std::find_if(rows.begin(), rows.end(), [&](const sim::ResultRow& r) {
    return r.framework == framework.name;
  });
  if (under_setup != rows.end()) {
    const sim::Experiment one = sim::for_workload(e, under_setup->workload);
    const int threads = sim::decode_threads_of(one);
    if (one.input_pipeline == "dali") {
      out.push_back("DALI's input pipeline (images decoded on the GPUs), which no reading of the "
                    "study has");
    } else if (threads != s.decode_threads.value_or(framework.input.decode_threads)) {
      out.push_back(fmt::format("{} decode threads, which no reading of the study has", threads));
    }
    const double buffer_mb = sim::allreduce_buffer_mb(one);
    if (buffer_mb != s.fusion_mb.value_or(framework.allreduce.buffer.value / 1e6)) {
      out.push_back(fmt::format("a fusion buffer of {:g} MB, which no reading of the study has",
                                buffer_mb));
    }
  }
  if (reads_input(e) == s.synthetic_data) {
    out.push_back(s.synthetic_data ? "an input pipeline where the study fed synthetic data"
                                   : "no input pipeline (--without input) where the study read "
                                     "its dataset");
  }
  for (const std::string& mechanism : e.without) {
    if (mechanism != "input") out.push_back(fmt::format("--without {}", mechanism));
  }
  return out;
}

// The study's machine a topology is: "" for the setup's, a name for another server; nullopt if
// the study ran on none like it.
std::optional<std::string> machine_of(const Setup& setup, const std::string& topology) {
  for (const Machine& m : setup.all_machines()) {
    if (stem(m.topology) == stem(topology)) return m.name;
  }
  return std::nullopt;
}

}  // namespace

const char* metric_label(Metric metric) {
  switch (metric) {
    case Metric::Speedup: return "speedup";
    case Metric::OverheadPct: return "overhead %";
    case Metric::ImagesPerS: return "per s";
    case Metric::MemoryPretrainGb: return "pretrain GB";
    case Metric::MemoryGpu0Gb: return "GPU0 GB";
    case Metric::MemoryGpuxGb: return "other GB";
    case Metric::EpochMin: return "epoch min";
    case Metric::GainPct: return "gain %";
    case Metric::PrecisionSpeedup: return "prec. speedup";
  }
  throw std::logic_error("validation: unknown metric");
}

RunStudy compare_run_with_study(const Suite& headline, const sim::Experiment& e,
                                const std::vector<sim::ResultRow>& rows) {
  const wl::FrameworkConfig setup_framework = wl::load_framework(headline.setup.framework);
  RunStudy out;
  out.suite = headline.name;
  out.title = headline.title;
  out.by_row.resize(rows.size());

  // The study as this run reads it: the headline, changed by every reading the run follows.
  Suite suite = headline;
  std::vector<SetupAlternative> followed;
  for (const SetupAlternative& reading : headline.setup.alternatives) {
    StudyReading r{reading.id, reading_text(reading), "", "", follows(headline, e, reading)};
    r.select = selection(headline, e, reading, r.why_not);
    if (r.followed) {
      suite = suite.read_as(reading);
      followed.push_back(reading);
    }
    out.readings.push_back(std::move(r));
  }
  out.headline = headline_text(headline, setup_framework, followed);
  // Every framework the study ran under, loaded once: a row is a run of a network only under
  // the network's.
  std::map<std::string, wl::FrameworkConfig> frameworks;  // by the suite's name or file
  std::set<std::string> framework_names;
  for (const NameMapping& network : suite.networks) {
    const std::string& f = suite.framework_of(network.study);
    if (!frameworks.contains(f)) frameworks.emplace(f, wl::load_framework(f));
    framework_names.insert(frameworks.at(f).name);
  }
  out.departures = departures_of(suite, e, setup_framework, framework_names, rows);
  const std::optional<std::string> machine = machine_of(suite.setup, e.topology);
  if (!machine) {
    out.departures.insert(out.departures.begin(),
                          fmt::format("the study ran on {}, not on {}: no measurement applies",
                                      suite.setup.topology, e.topology));
    return out;
  }

  // The run's rows as the study's runs; a row may stand for several (two names of one network).
  Predictions predictions;
  std::map<RunKey, size_t> row_of;
  for (const NameMapping& network : suite.networks) {
    const wl::FrameworkConfig& framework = frameworks.at(suite.framework_of(network.study));
    auto is_run = [&](const sim::ResultRow& row) {
      return stem(row.workload) == stem(network.gpuscale) && row.framework == framework.name &&
             row.precision == suite.precision_of(network.study);
    };
    // A network this run did not train is not loaded: the run's --set on workloads may not fit it.
    if (std::none_of(rows.begin(), rows.end(), is_run)) continue;
    const wl::Workload w = wl::load_workload(network.gpuscale, e.workload_overrides);
    predictions.strong_images[network.study] = strong_images_of(suite.setup, w);
    for (size_t i = 0; i < rows.size(); ++i) {
      const sim::ResultRow& row = rows[i];
      if (!is_run(row)) continue;
      for (const std::string& method : suite.methods_of(network.study)) {
        const std::string comm = sim::resolve_exchange(suite.comm_of(method), framework).name;
        if (comm != row.comm || suite.spatial_of(method) != row.spatial_ways) continue;
        // Samples per exchange: a GPU's micro-batches, or (a total batch) every GPU's.
        const int per_gpu = row.batch * row.accumulate;
        const int batch = suite.batch_total_of(network.study) ? per_gpu * row.gpus : per_gpu;
        const RunKey key{network.study, method, row.gpus, batch, *machine};
        predictions.runs[key] = predicted_run(row);
        row_of[key] = i;
      }
    }
  }

  const Metrics metrics(suite, predictions);
  const sim::Scaling scaling = e.scaling;
  std::vector<PointResult> points;
  // The value of a point or bound whose runs this experiment simulated, and the row it is of.
  auto shown = [&](const Table& table,
                   const StudyRun& run) -> std::optional<std::pair<size_t, double>> {
    if (run.scaling != scaling) return std::nullopt;
    const auto row = row_of.find({run.network, run.method, run.gpus, run.batch, run.machine});
    if (row == row_of.end()) return std::nullopt;
    try {
      return std::pair{row->second, metrics.predicted(table, run)};
    } catch (const MissingPrediction&) {
      return std::nullopt;  // it needs a run this experiment did not simulate
    }
  };
  for (const Table& table : suite.tables) {
    for (const Point& p : table.points) {
      const auto value = shown(table, p);
      if (!value) continue;
      const bool calibration = setup_framework.calibration.has_point(suite.name, p.id);
      points.push_back({table.id, p, value->second, error_pct(p.measured, value->second),
                        calibration});
      out.by_row[value->first].push_back({table.id, table.metric, p.measured, std::nullopt,
                                          std::nullopt, value->second, points.back().error_pct,
                                          true, p.suspect, calibration});
      if (!p.suspect && !calibration) ++out.points_in_mape;
    }
    for (const Bound& b : table.bounds) {
      const auto value = shown(table, b);
      if (!value) continue;
      const bool holds = b.holds(value->second);
      out.by_row[value->first].push_back({table.id, table.metric, std::nullopt, b.below, b.above,
                                          value->second, std::nullopt, holds});
      ++out.bounds;
      out.bounds_holding += holds ? 1 : 0;
    }
  }
  out.mape_pct = mape_pct(points);
  return out;
}

}  // namespace gpuscale::validation
