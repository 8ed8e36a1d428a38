#include "validation/src/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace gpuscale::validation {
namespace {

using nlohmann::ordered_json;

constexpr int kFailuresShown = 3;

// "P2P = p2p", with what else the mapping says: "Spatial = nccl (4 GPUs per sample)",
// "Mesh = mesh-tangling (batch 1; Sample, Spatial)".
std::string names_of(const std::vector<NameMapping>& mappings) {
  std::vector<std::string> pairs;
  for (const NameMapping& m : mappings) {
    std::vector<std::string> notes;
    if (m.spatial > 1) notes.push_back(fmt::format("{} GPUs per sample", m.spatial));
    if (!m.batches.empty())
      notes.push_back(fmt::format("batch{} {}", m.batches.size() == 1 ? "" : "es",
                                  fmt::join(m.batches, "/")));
    if (!m.methods.empty()) notes.push_back(fmt::format("{}", fmt::join(m.methods, ", ")));
    if (!m.framework.empty())
      notes.push_back(std::filesystem::path(m.framework).filename().string());
    if (!m.precision.empty()) notes.push_back(m.precision);
    if (!m.input_pipeline.empty()) notes.push_back(m.input_pipeline + " input");
    // A suite's own workload file by its name: the folder is the suite's.
    pairs.push_back(m.study + " = " + std::filesystem::path(m.gpuscale).filename().string() +
                    (notes.empty() ? "" : fmt::format(" ({})", fmt::join(notes, "; "))));
  }
  return fmt::format("{}", fmt::join(pairs, ", "));
}

// The framework's fitted parameters, each beside its sourced range, and what they were fitted on;
// or that it has none.
std::string fitted_lines(const wl::FrameworkConfig& f) {
  std::string out;
  for (const wl::ParameterView& p : f.parameters()) {
    if (!p.fitted) continue;
    out += fmt::format("  {} = {} (fitted; sourced range [{}, {}])\n", p.name,
                       wl::format_parameter(p.unit, p.value), wl::format_parameter(p.unit, p.low),
                       wl::format_parameter(p.unit, p.high));
  }
  if (out.empty()) return fmt::format("framework {}: nothing fitted\n", f.name);
  const wl::Calibration& cal = f.calibration;
  return fmt::format("framework {}: {} on {} ({} calibration points: shown, never in a MAPE)\n",
                     f.name,
                     cal.fitted_on.empty() ? "not yet fitted, starting values"
                                           : "fitted " + cal.fitted_on,
                     cal.set, cal.points.size()) +
         out;
}

std::string header(const Suite& suite, const wl::FrameworkConfig& framework) {
  const Setup& s = suite.setup;
  const bool spatial = std::any_of(suite.methods.begin(), suite.methods.end(),
                                   [](const NameMapping& m) { return m.spatial > 1; });
  std::string machines;
  for (const Machine& m : s.machines) {
    machines += fmt::format("{}machine {} = {} ({} GB GPUs; GPUs {})", machines.empty() ? "" : "; ",
                            m.name, m.topology, m.gpu_memory.value / 1e9, fmt::join(m.gpus, "/"));
  }
  if (!machines.empty()) machines += "\n";
  return fitted_lines(framework) + fmt::format(
      "Validation suite {}: {}\n"
      "machine {}; methods {}\n"
      "{}networks {}\n"
      "per-GPU batches {}{}; GPUs {}; strong scaling {} images per epoch, weak {} per GPU{}\n"
      "{}",
      suite.name, suite.title, s.topology, names_of(suite.methods), machines,
      names_of(suite.networks), fmt::join(s.batches, "/"),
      spatial ? " (per group of GPUs sharing a sample)" : "", fmt::join(s.gpus, "/"),
      s.strong_images_per_dataset ? "each dataset's" : std::to_string(s.strong_images),
      s.weak_images_per_gpu,
      s.synthetic_data ? "; synthetic data (no input pipeline)" : "",
      suite.tables.empty() ? ""
                           : "error % = 100 x (predicted - measured) / measured; MAPE = mean "
                             "|error %| over validation points; suspect and calibration points "
                             "are shown, not counted\n");
}

// The widths of a table's run columns: the study's names as long as they come, and a machine
// column where a run names one.
struct RunColumns {
  size_t network = 13, method = 6, machine = 0, batch = 5;

  void fit(const StudyRun& r) {
    network = std::max(network, r.network.size());
    method = std::max(method, r.method.size());
    batch = std::max(batch, std::to_string(r.batch).size());
    if (!r.machine.empty()) machine = std::max({machine, r.machine.size(), size_t{7}});
  }
  std::string machine_cell(const std::string& name) const {
    return machine == 0 ? "" : fmt::format(" {:<{}}", name, machine);
  }
  // A run's columns, then three of values.
  std::string of(const StudyRun& r) const {
    return fmt::format("  {:<{}}{} {:<{}} {:>4} {:>{}}", r.network, network,
                       machine_cell(r.machine.empty() ? "-" : r.machine), r.method, method, r.gpus,
                       r.batch, batch);
  }
  std::string header(const char* first, const char* second, const char* third) const {
    return fmt::format("  {:<{}}{} {:<{}} {:>4} {:>{}} {:>9} {:>9} {:>8}\n", "network", network,
                       machine_cell("machine"), "method", method, "gpus", "batch", batch, first,
                       second, third);
  }
};

std::string bound_text(const Bound& b) {
  if (b.below && b.above) return fmt::format("({:g}, {:g})", *b.above, *b.below);
  return b.below ? fmt::format("< {:g}", *b.below) : fmt::format("> {:g}", *b.above);
}

std::string table_section(const TableSummary& t, const Comparison& c, Metric metric) {
  RunColumns columns;
  for (const PointResult& p : c.points) {
    if (p.table == t.id) columns.fit(p.point);
  }
  for (const BoundResult& b : c.bounds) {
    if (b.table == t.id) columns.fit(b.bound);
  }
  std::string points, bounds;
  for (const PointResult& p : c.points) {
    if (p.table != t.id) continue;
    const char* note = p.point.suspect  ? "  suspect: not counted"
                       : p.calibration ? "  calibration: fitted on, not counted"
                                       : "";
    points += columns.of(p.point) + fmt::format(" {:>9.2f} {:>9.2f} {:>+8.1f}{}\n",
                                                 p.point.measured, p.predicted, p.error_pct, note);
  }
  for (const BoundResult& b : c.bounds) {
    if (b.table != t.id) continue;
    bounds += columns.of(b.bound) + fmt::format(" {:>9} {:>9.2f} {:>8}\n", bound_text(b.bound),
                                                b.predicted, b.holds ? "yes" : "no");
  }
  std::string out = fmt::format("\n{}: {} [{}]\n", t.id, t.title, to_string(metric));
  if (!points.empty()) out += columns.header("measured", "predicted", "error %") + points;
  if (!bounds.empty()) out += columns.header("bound", "predicted", "holds") + bounds;
  if (t.mape_pct) {
    out += fmt::format("  MAPE {:.1f}% over {} validation points\n", *t.mape_pct, t.points_in_mape);
  }
  if (t.calibration_mape_pct) {
    out += fmt::format("  calibration points: MAPE {:.1f}% over {} (reported apart)\n",
                       *t.calibration_mape_pct, t.calibration_points);
  }
  if (t.bounds > 0) {
    out += fmt::format("  bounds: {} of {} hold (pass/fail, not in the MAPE)\n", t.bounds_holding,
                       t.bounds);
  }
  for (const AlternativeSummary& a : c.alternatives) {
    if (a.table != t.id) continue;
    out += fmt::format("  alternative reading {} (the mean over {} GPUs): MAPE {} (not in any "
                       "headline)\n",
                       a.reading.id, fmt::join(a.reading.gpus, " and "),
                       a.mape_pct ? fmt::format("{:.1f}%", *a.mape_pct) : "-");
  }
  return out;
}

// The MAPE of each table beside its first look, then the suite's history.
std::string mape_summary(const Comparison& c, const SuiteHistory& history) {
  std::string out = fmt::format("\nMAPE per table\n  {:<22} {:>7} {:>7} {:>10}\n", "table",
                                "MAPE %", "points", "first look");
  for (const TableSummary& t : c.tables) {
    std::string notes;
    if (t.suspect_points > 0)
      notes += fmt::format("  {} suspect point{} not counted", t.suspect_points,
                           t.suspect_points == 1 ? "" : "s");
    if (t.bounds > 0) notes += fmt::format("  bounds: {} of {} hold", t.bounds_holding, t.bounds);
    if (t.calibration_mape_pct)
      notes += fmt::format("  calibration: {:.1f}% over {}", *t.calibration_mape_pct,
                           t.calibration_points);
    out += fmt::format("  {:<22} {:>7} {:>7} {:>10}{}\n", t.id,
                       t.mape_pct ? fmt::format("{:.1f}", *t.mape_pct) : "-", t.points_in_mape,
                       first_look_cell(history, t.id), notes);
  }
  out += fmt::format("  {:<22} {:>7} {:>7} {:>10}  (validation points only)\n", "overall",
                     c.overall_mape_pct ? fmt::format("{:.1f}", *c.overall_mape_pct) : "-",
                     c.overall_points, first_look_cell(history, "overall"));
  if (c.calibration_mape_pct) {
    out += fmt::format("  {:<22} {:>7.1f} {:>7}  (fitted on: not a measure of accuracy)\n",
                       "calibration points", *c.calibration_mape_pct, c.calibration_points);
  }
  return out;
}

// The claims that hold (every check holds), by id.
std::vector<std::string> claims_that_hold(const Comparison& c) {
  std::vector<std::string> ids;
  for (const ClaimResult& r : c.claims) {
    if (r.holds == true) ids.push_back(r.id);
  }
  return ids;
}

// The claims checked at all: a not_checked claim neither holds nor fails.
size_t checked_claims(const Comparison& c) {
  return static_cast<size_t>(std::count_if(c.claims.begin(), c.claims.end(), [](const auto& r) {
    return r.kind != "not_checked";
  }));
}

std::string claims_section(const Comparison& c);

std::string setup_readings_section(const std::vector<SetupReadingResult>& readings) {
  std::string out;
  for (const SetupReadingResult& r : readings) {
    const Comparison& c = r.comparison;
    int held = 0, bounds = 0;
    for (const TableSummary& t : c.tables) held += t.bounds_holding, bounds += t.bounds;
    out += fmt::format("\nAlternative reading of the setup: {} ({}; not in any headline)\n",
                       r.reading.id, reading_text(r.reading));
    // A suite of claims only: its claims are all a reading changes.
    if (c.tables.empty()) {
      out += claims_section(c).substr(1);
      continue;
    }
    for (const TableSummary& t : c.tables) {
      if (t.mape_pct)
        out += fmt::format("  {:<22} {:>7.1f} {:>7}\n", t.id, *t.mape_pct, t.points_in_mape);
    }
    out += fmt::format("  {:<22} {:>7} {:>7}  bounds: {} of {} hold; claims: {} of {} hold\n",
                       "overall",
                       c.overall_mape_pct ? fmt::format("{:.1f}", *c.overall_mape_pct) : "-",
                       c.overall_points, held, bounds, claims_that_hold(c).size(),
                       checked_claims(c));
  }
  return out;
}

std::string verdict_name(const ClaimResult& r) {
  if (r.kind == "not_checked") return "not checked";
  if (!r.holds) return "no verdict";
  return *r.holds ? "holds" : "FAILS";
}

// The first sentence of a reason (up to ". " and a capital): the table keeps one line per claim.
std::string first_sentence(const std::string& text) {
  for (size_t i = 0; i + 2 < text.size(); ++i) {
    if (text[i] == '.' && text[i + 1] == ' ' &&
        std::isupper(static_cast<unsigned char>(text[i + 2]))) {
      return text.substr(0, i + 1);
    }
  }
  return text;
}

std::string claim_lines(const ClaimResult& r) {
  std::string out = fmt::format("  {:<36} {:<22} {}", r.id, r.kind, verdict_name(r));
  if (r.kind == "not_checked") return out + ": " + first_sentence(r.why_not_checked) + "\n";
  const auto failing = std::count_if(r.checks.begin(), r.checks.end(),
                                     [](const Check& c) { return c.holds == false; });
  if (r.holds == false) {
    out += fmt::format(": {} of {} checks fail\n", failing, r.checks.size());
    int shown = 0;
    for (const Check& c : r.checks) {
      if (c.holds == false && shown++ < kFailuresShown)
        out += fmt::format("      {} = {:.3g}\n", c.what, c.value);
    }
    if (failing > kFailuresShown)
      out += fmt::format("      ... and {} more (--format json lists all)\n",
                         failing - kFailuresShown);
    return out;
  }
  if (r.checks.empty()) return out + ": nothing to check\n";
  if (r.holds) return out + fmt::format(": all {} checks\n", r.checks.size());
  // No tolerance: report the largest value, which the claim would want small.
  const auto worst =
      std::max_element(r.checks.begin(), r.checks.end(),
                       [](const Check& a, const Check& b) { return a.value < b.value; });
  return out + fmt::format(" (no tolerance); largest: {} = {:.3g}\n", worst->what, worst->value);
}

std::string claims_section(const Comparison& c) {
  int holds = 0, fails = 0, open = 0, unchecked = 0;
  for (const ClaimResult& r : c.claims) {
    if (r.kind == "not_checked")
      ++unchecked;
    else if (!r.holds)
      ++open;
    else
      ++(*r.holds ? holds : fails);
  }
  std::string out = fmt::format("\nClaims: {} hold, {} fail, {} without verdict, {} not checked\n",
                                holds, fails, open, unchecked);
  for (const ClaimResult& r : c.claims) out += claim_lines(r);
  return out;
}

ordered_json run_json(const std::string& table, const StudyRun& run) {
  ordered_json out = {{"id", run.id}, {"table", table}, {"network", run.network},
                      {"method", run.method}};
  if (!run.machine.empty()) out["machine"] = run.machine;  // a suite comparing servers
  out["gpus"] = run.gpus;
  out["batch"] = run.batch;
  out["scaling"] = run.scaling == sim::Scaling::Weak ? "weak" : "strong";
  return out;
}

ordered_json optional_number_json(const std::optional<double>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

ordered_json optional_bool(const std::optional<bool>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

}  // namespace

// What a reading changes, in words: "batch per all GPUs together; 39 decode threads;
// fusion buffer 0 MB; GoogLeNet = googlenet-299; Sample = nccl; EDSR under edsr.yaml".
std::string reading_text(const SetupAlternative& reading) {
  std::vector<std::string> parts;
  if (reading.batch_total)
    parts.push_back(*reading.batch_total ? "batch per all GPUs together" : "batch per GPU");
  if (reading.decode_threads)
    parts.push_back(fmt::format("{} decode threads", *reading.decode_threads));
  if (reading.fusion_mb) parts.push_back(fmt::format("fusion buffer {} MB", *reading.fusion_mb));
  if (reading.synthetic_data)
    parts.push_back(*reading.synthetic_data ? "synthetic data (no input pipeline)"
                                            : "the dataset read through the input pipeline");
  for (const auto& [network, workload] : reading.networks)
    parts.push_back(fmt::format("{} = {}", network, workload));
  for (const auto& [method, comm] : reading.methods)
    parts.push_back(fmt::format("{} = {}", method, comm));
  for (const auto& [network, framework] : reading.frameworks) {
    parts.push_back(fmt::format("{} under {}", network,
                                std::filesystem::path(framework).filename().string()));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string comparison_table(const Suite& suite, const Comparison& c,
                             const wl::FrameworkConfig& framework,
                             const std::vector<SetupReadingResult>& readings) {
  std::string out = header(suite, framework);
  // A suite of claims only: the headline's claims, then each reading's.
  if (c.tables.empty()) {
    return out + history_summary(suite.history) + claims_section(c) +
           setup_readings_section(readings);
  }
  for (size_t i = 0; i < c.tables.size(); ++i)
    out += table_section(c.tables[i], c, suite.tables[i].metric);
  out += mape_summary(c, suite.history) + history_summary(suite.history);
  out += setup_readings_section(readings);
  out += claims_section(c);
  return out;
}

ordered_json comparison_json(const Suite& suite, const Comparison& c,
                             const wl::FrameworkConfig& framework,
                             const std::vector<SetupReadingResult>& readings) {
  ordered_json setup_readings = ordered_json::array();
  for (const SetupReadingResult& r : readings) {
    ordered_json mape = ordered_json::object();
    int held = 0, bounds = 0;
    for (const TableSummary& t : r.comparison.tables) {
      mape[t.id] = optional_number_json(t.mape_pct);
      held += t.bounds_holding, bounds += t.bounds;
    }
    mape["overall"] = optional_number_json(r.comparison.overall_mape_pct);
    ordered_json reading = {{"id", r.reading.id}};
    if (r.reading.batch_total) reading["batch_per"] = *r.reading.batch_total ? "total" : "gpu";
    if (r.reading.decode_threads) reading["decode_threads"] = *r.reading.decode_threads;
    if (r.reading.fusion_mb) reading["fusion_mb"] = *r.reading.fusion_mb;
    if (r.reading.synthetic_data)
      reading["data"] = *r.reading.synthetic_data ? "synthetic" : "dataset";
    if (!r.reading.networks.empty()) reading["networks"] = r.reading.networks;
    if (!r.reading.methods.empty()) reading["methods"] = r.reading.methods;
    for (const auto& [network, file] : r.reading.frameworks)  // a file by its name only
      reading["frameworks"][network] = std::filesystem::path(file).filename().string();
    reading["mape_pct"] = mape;
    reading["bounds_holding"] = held;
    reading["bounds"] = bounds;
    const std::vector<std::string> held_claims = claims_that_hold(r.comparison);
    reading["claims_holding"] = held_claims.size();
    reading["claims_that_hold"] = held_claims;
    setup_readings.push_back(std::move(reading));
  }
  ordered_json points = ordered_json::array();
  for (const PointResult& p : c.points) {
    ordered_json point = run_json(p.table, p.point);
    point["measured"] = p.point.measured;
    point["predicted"] = p.predicted;
    point["error_pct"] = p.error_pct;
    point["suspect"] = p.point.suspect;
    point["role"] = p.calibration ? "calibration" : "validation";
    points.push_back(point);
  }
  ordered_json bounds = ordered_json::array();
  for (const BoundResult& b : c.bounds) {
    ordered_json bound = run_json(b.table, b.bound);
    if (b.bound.below) bound["below"] = *b.bound.below;
    if (b.bound.above) bound["above"] = *b.bound.above;
    bound["predicted"] = b.predicted;
    bound["holds"] = b.holds;
    bounds.push_back(bound);
  }
  ordered_json claims = ordered_json::array();
  for (const ClaimResult& r : c.claims) {
    ordered_json checks = ordered_json::array();
    for (const Check& k : r.checks)
      checks.push_back({{"what", k.what}, {"value", k.value}, {"holds", optional_bool(k.holds)}});
    ordered_json claim = {
        {"id", r.id}, {"kind", r.kind}, {"holds", optional_bool(r.holds)}, {"checks", checks}};
    if (!r.why_not_checked.empty()) claim["why_not_checked"] = r.why_not_checked;
    claims.push_back(claim);
  }
  ordered_json alternatives = ordered_json::array();
  for (const AlternativeSummary& a : c.alternatives) {
    alternatives.push_back({{"table", a.table},
                            {"id", a.reading.id},
                            {"gpus", a.reading.gpus},
                            {"mape_pct", optional_number_json(a.mape_pct)}});
  }
  ordered_json mape = ordered_json::object();
  for (const TableSummary& t : c.tables) mape[t.id] = optional_number_json(t.mape_pct);
  mape["overall"] = optional_number_json(c.overall_mape_pct);
  ordered_json calibration_mape = ordered_json::object();
  for (const TableSummary& t : c.tables) {
    if (t.calibration_mape_pct) calibration_mape[t.id] = *t.calibration_mape_pct;
  }
  calibration_mape["overall"] = optional_number_json(c.calibration_mape_pct);
  ordered_json fitted = ordered_json::array();
  for (const wl::ParameterView& p : framework.parameters()) {
    if (!p.fitted) continue;
    fitted.push_back({{"name", p.name},
                      {"unit", p.unit == wl::ParameterUnit::Seconds ? "s" : "bytes"},
                      {"value", p.value},
                      {"range", {p.low, p.high}}});
  }
  ordered_json calibration_points = ordered_json::array();
  for (const wl::SuitePoint& p : framework.calibration.points)
    calibration_points.push_back({{"suite", p.suite}, {"id", p.id}});
  return {{"suite", suite.name},
          {"framework", {{"name", framework.name},
                         {"fitted", fitted},
                         {"fitted_on", framework.calibration.fitted_on},
                         {"calibration_points", calibration_points}}},
          {"points", points},
          {"bounds", bounds},
          {"claims", claims},
          {"mape_pct", mape},
          {"history", history_json(suite.history)},
          {"calibration_mape_pct", calibration_mape},
          {"alternative_readings", alternatives},
          {"setup_readings", setup_readings}};
}

}  // namespace gpuscale::validation
