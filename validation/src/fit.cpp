#include "validation/src/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

#include "topologies/core/error.hpp"
#include "validation/src/comparison.hpp"
#include "validation/src/metrics.hpp"
#include "validation/src/predictions.hpp"
#include "validation/src/suite.hpp"

namespace gpuscale::validation {
namespace {

namespace fs = std::filesystem;

constexpr double kGolden = 0.6180339887498949;
constexpr double kLogTolerance = 0.002;  // golden-section stops at 0.2% of the value
constexpr double kEdgeShare = 0.01;      // within 1% of the log range of an edge: at the edge
constexpr double kMoved = 0.005;         // a sweep that moves no cost by 0.5% ends the fit
constexpr int kMostSweeps = 6;
// The coarse scan before the golden-section search, its points over the log range: the points
// may stop depending on a parameter over part of its range (the iteration bound by something
// else there), and golden-section search alone can then settle on that flat stretch.
constexpr int kScanPoints = 9;
constexpr double kDetermines = 1.0;  // percentage points

struct CalibrationPoint {
  const Table* table;
  Point point;
};

// The suite cut down to the calibration points: only their networks, batches and GPU counts
// are simulated (and one GPU, which speedups divide by), no bounds, no claims.
Suite calibration_suite(const Suite& full, const std::vector<CalibrationPoint>& points) {
  Suite s = full;
  s.claims.clear();
  s.tables.clear();
  s.setup.batches.clear();
  s.setup.gpus = {1};
  s.networks.clear();
  s.methods.clear();
  auto add = [](auto& list, const auto& value) {
    if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
  };
  for (const CalibrationPoint& c : points) {
    add(s.setup.batches, c.point.batch);
    add(s.setup.gpus, c.point.gpus);
    for (const NameMapping& n : full.networks)
      if (n.study == c.point.network && s.networks.end() == std::find_if(
          s.networks.begin(), s.networks.end(), [&](const NameMapping& m) { return m.study == n.study; }))
        s.networks.push_back(n);
    for (const NameMapping& m : full.methods) {
      const bool wanted = m.study == c.point.method || m.study == c.table->relative_to;
      if (wanted && s.methods.end() == std::find_if(s.methods.begin(), s.methods.end(),
                                                   [&](const NameMapping& x) { return x.study == m.study; }))
        s.methods.push_back(m);
    }
    Table t = *c.table;
    t.points = {c.point};
    t.bounds.clear();
    s.tables.push_back(std::move(t));
  }
  return s;
}

// The calibration points of `suite`, found among its tables.
std::vector<CalibrationPoint> find_points(const Suite& suite, const wl::FrameworkConfig& f) {
  std::vector<CalibrationPoint> found;
  for (const wl::SuitePoint& point : f.calibration.points) {
    if (point.suite != suite.name) continue;
    const size_t before = found.size();
    for (const Table& t : suite.tables) {
      for (const Point& p : t.points) {
        if (p.id == point.id) found.push_back({&t, p});
      }
    }
    if (found.size() == before) {
      throw ConfigError(Origin{f.file, 0},
                        fmt::format("calibration point {} is not a point of suite {} (point ids "
                                    "are TABLE/NETWORK/METHOD/Ggpu/bBATCH)",
                                    point.id, suite.name));
    }
  }
  return found;
}

// One suite's calibration points and the suite cut down to them.
class SuiteCalibration {
 public:
  SuiteCalibration(Suite full, const wl::FrameworkConfig& framework)
      : full_(std::move(full)),
        points_(find_points(full_, framework)),
        suite_(calibration_suite(full_, points_)) {}

  std::vector<std::pair<wl::SuitePoint, double>> residuals_pct(const wl::FrameworkConfig& f) const {
    Predictions predictions =
        predict(suite_, nullptr, {}, std::make_shared<const wl::FrameworkConfig>(f));
    const Metrics metrics(suite_, std::move(predictions));
    std::vector<std::pair<wl::SuitePoint, double>> residuals;
    for (const Table& t : suite_.tables) {
      const Point& p = t.points.front();
      residuals.push_back({{suite_.name, p.id}, error_pct(p.measured, metrics.predicted(t, p))});
    }
    return residuals;
  }

 private:
  Suite full_;  // points_ refer to its tables
  std::vector<CalibrationPoint> points_;
  Suite suite_;
};

// The fit's objective, mean(ln(predicted / measured))^2 over every calibration point, and the
// residuals, for one set of parameter values.
class Objective {
 public:
  Objective(const wl::FrameworkConfig& framework, const std::function<void(int)>& progress)
      : progress_(progress) {
    std::vector<std::string> suites;
    for (const wl::SuitePoint& p : framework.calibration.points) {
      if (std::find(suites.begin(), suites.end(), p.suite) == suites.end()) suites.push_back(p.suite);
    }
    for (const std::string& name : suites) suites_.emplace_back(load_suite(name), framework);
  }

  double operator()(const wl::FrameworkConfig& f) {
    double sum = 0;
    const auto& residuals = residuals_pct(f);
    for (const auto& [point, error] : residuals) sum += std::pow(std::log(1 + error / 100), 2);
    return sum / static_cast<double>(residuals.size());
  }

  // Simulated once per set of parameter values: the range checks, the scans and the searches
  // come back to the same values.
  const std::vector<std::pair<wl::SuitePoint, double>>& residuals_pct(const wl::FrameworkConfig& f) {
    std::string key;
    for (const wl::ParameterView& p : f.parameters()) key += fmt::format("{:.17g};", p.value);
    if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
    std::vector<std::pair<wl::SuitePoint, double>> all;
    for (const SuiteCalibration& s : suites_) {
      const auto residuals = s.residuals_pct(f);
      all.insert(all.end(), residuals.begin(), residuals.end());
    }
    ++evaluations_;
    if (progress_) progress_(evaluations_);
    return cache_.emplace(key, std::move(all)).first->second;
  }

  int evaluations() const { return evaluations_; }

 private:
  std::vector<SuiteCalibration> suites_;
  std::function<void(int)> progress_;
  std::map<std::string, std::vector<std::pair<wl::SuitePoint, double>>> cache_;
  int evaluations_ = 0;
};

// The best ln(value) of one parameter in [ln low, ln high]: a coarse scan brackets the best scan
// point, then golden-section search narrows the bracket (it needs one minimum in it).
double best_log_value(wl::FrameworkConfig& f, const wl::ParameterView& p, Objective& objective) {
  auto at = [&](double log_value) {
    f.set_parameter(p.name, std::exp(log_value));
    return objective(f);
  };
  const double low = std::log(p.low), high = std::log(p.high);
  const double step = (high - low) / (kScanPoints - 1);
  std::vector<double> scan;
  for (int i = 0; i < kScanPoints; ++i) scan.push_back(at(low + i * step));
  const auto best = static_cast<int>(std::min_element(scan.begin(), scan.end()) - scan.begin());
  double a = std::max(low, low + (best - 1) * step), b = std::min(high, low + (best + 1) * step);
  double c = b - kGolden * (b - a), d = a + kGolden * (b - a);
  double fc = at(c), fd = at(d);
  while (b - a > kLogTolerance) {
    if (fc <= fd) {
      b = d, d = c, fd = fc;
      c = b - kGolden * (b - a);
      fc = at(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + kGolden * (b - a);
      fd = at(d);
    }
  }
  return (a + b) / 2;
}

}  // namespace

const char* to_string(FittedParameter::Outcome outcome) {
  switch (outcome) {
    case FittedParameter::Outcome::Fitted:
      return "fitted";
    case FittedParameter::Outcome::AtEdge:
      return "AT ITS RANGE'S EDGE: a mechanism is missing";
    case FittedParameter::Outcome::Undetermined:
      return "not determined by the calibration set: left as it was";

  }
  return "?";
}

bool FitResult::any_at_edge() const {
  return std::any_of(parameters.begin(), parameters.end(), [](const FittedParameter& p) {
    return p.outcome == FittedParameter::Outcome::AtEdge;
  });
}

FitResult fit_framework(const std::string& framework_name_or_path,
                         const std::function<void(int)>& progress) {
  FitResult result{wl::load_framework(framework_name_or_path), {}, {}, 0};
  wl::FrameworkConfig& f = result.framework;
  if (f.calibration.points.empty()) {
    throw ConfigError(Origin{f.file, 0},
                      "the framework declares no calibration set (add calibration: {set, "
                      "points: {SUITE: [POINT, ...]}})");
  }
  std::vector<wl::ParameterView> fitted;
  for (const wl::ParameterView& p : f.parameters())
    if (p.fitted) fitted.push_back(p);
  if (fitted.empty()) {
    throw ConfigError(Origin{f.file, 0},
                      "no parameter is marked fitted: true, so there is nothing to fit");
  }
  Objective objective(f, progress);

  for (const wl::ParameterView& p : fitted) {
    // A parameter determines the points if moving it across its range moves some point by at
    // least kDetermines percentage points; less is the simulation's own jitter.
    f.set_parameter(p.name, p.low);
    const auto at_low = objective.residuals_pct(f);
    f.set_parameter(p.name, p.high);
    const auto at_high = objective.residuals_pct(f);
    f.set_parameter(p.name, p.value);
    bool determined = false;
    for (size_t i = 0; i < at_low.size(); ++i)
      determined = determined || std::abs(at_high[i].second - at_low[i].second) >= kDetermines;
    result.parameters.push_back({p.name, p.unit, p.value, p.value, p.low, p.high,
                                 determined ? FittedParameter::Outcome::Fitted
                                            : FittedParameter::Outcome::Undetermined});
  }
  // Every search starts from the middle of the ranges, not from the file's values: two
  // parameters that trade off against each other (a per-op and a per-key host cost, on two
  // batch-1 points) leave a ridge of equal fits, and a start that depends on the last fit would
  // make the result depend on the history of the file instead of on its inputs.
  for (FittedParameter& p : result.parameters) {
    if (p.outcome == FittedParameter::Outcome::Undetermined) continue;
    p.after = std::sqrt(p.low * p.high);
    f.set_parameter(p.name, p.after);
  }
  for (int sweep = 0; sweep < kMostSweeps; ++sweep) {
    double largest_move = 0;
    for (FittedParameter& p : result.parameters) {
      if (p.outcome == FittedParameter::Outcome::Undetermined) continue;
      const wl::ParameterView view{p.name, p.unit, p.after, p.low, p.high, true, {}};
      const double best = best_log_value(f, view, objective);
      f.set_parameter(p.name, std::exp(best));
      largest_move = std::max(largest_move, std::abs(best - std::log(p.after)));
      p.after = std::exp(best);
    }
    if (largest_move < kMoved) break;
  }
  for (FittedParameter& p : result.parameters) {
    if (p.outcome == FittedParameter::Outcome::Undetermined) continue;
    const double lo = std::log(p.low), hi = std::log(p.high), x = std::log(p.after);
    if (x - lo < kEdgeShare * (hi - lo) || hi - x < kEdgeShare * (hi - lo))
      p.outcome = FittedParameter::Outcome::AtEdge;
  }
  result.residuals_pct = objective.residuals_pct(f);
  result.evaluations = objective.evaluations();
  return result;
}

void write_fit(const FitResult& result, const std::string& date) {
  const wl::FrameworkConfig& f = result.framework;
  if (result.any_at_edge()) {
    throw ConfigError(Origin{f.file, 0},
                      "a fitted parameter ends at its range's edge, so the calibration points want a "
                      "value its sources rule out: a mechanism is missing from the model (find "
                      "it; do not widen the range). The file is unchanged");
  }
  std::ifstream in(f.file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);

  static const std::regex kValue(R"(value:\s*[^,}]+)");
  for (const FittedParameter& p : result.parameters) {
    const auto views = f.parameters();
    const Origin origin =
        std::find_if(views.begin(), views.end(), [&](const auto& v) { return v.name == p.name; })
            ->origin;
    const int line = origin.line;
    if (line < 1 || line > static_cast<int>(lines.size()) ||
        !std::regex_search(lines[static_cast<size_t>(line - 1)], kValue)) {
      throw ConfigError(origin, fmt::format("write {}'s fitted value as {{value: ..., fitted: "
                                            "true, range: [...]}} on one line",
                                            p.name));
    }
    std::string& text = lines[static_cast<size_t>(line - 1)];
    text = std::regex_replace(text, kValue, "value: " + wl::format_parameter(p.unit, p.after),
                              std::regex_constants::format_first_only);
  }

  // The provenance is the calibration block's last key, and the calibration block the file's
  // last: everything from the old `fit:` (and its comment) on is replaced.
  const auto calibration = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.rfind("calibration:", 0) == 0;
  });
  for (auto it = calibration == lines.end() ? lines.end() : calibration + 1; it != lines.end(); ++it) {
    if (!it->empty() && (*it)[0] != ' ' && (*it)[0] != '#') {
      throw ConfigError(Origin{f.file, static_cast<int>(it - lines.begin()) + 1},
                        "gpuscale fit writes its provenance at the end of the calibration block: "
                        "make calibration the file's last key");
    }
  }
  auto fit = std::find_if(calibration, lines.end(),
                          [](const std::string& l) { return l.rfind("  fit:", 0) == 0; });
  while (fit != lines.end() && fit != calibration && (fit - 1)->rfind("  #", 0) == 0) --fit;
  lines.erase(fit, lines.end());
  std::ostringstream out;
  for (const std::string& l : lines) out << l << '\n';
  out << "  # Written by `gpuscale fit`: the date and each calibration point's error (%) at the fit.\n"
      << "  fit:\n"
      << "    date: " << date << '\n'
      << "    residuals_pct:\n";
  std::string suite;
  for (const auto& [point, error] : result.residuals_pct) {
    if (point.suite != suite) out << "      " << (suite = point.suite) << ":\n";
    out << fmt::format("        {}: {:.2f}\n", point.id, error);
  }

  // Replace the file only once the new text loads as a framework.
  const fs::path target(f.file);
  const fs::path temporary = target.parent_path() / (".fit-" + target.filename().string());
  {
    std::ofstream tmp(temporary);
    tmp << out.str();
  }
  try {
    wl::load_framework(temporary.string());
  } catch (...) {
    fs::remove(temporary);
    throw;
  }
  fs::rename(temporary, target);
}

}  // namespace gpuscale::validation
