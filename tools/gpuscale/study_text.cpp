#include "tools/gpuscale/study_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>
#include <vector>

namespace gpuscale::cli {
namespace {

using validation::Metric;
using validation::StudyValue;

int decimals_of(Metric metric) {
  switch (metric) {
    case Metric::ImagesPerS: return 0;
    case Metric::OverheadPct:
    case Metric::GainPct: return 1;
    default: return 2;
  }
}

// "1.62", or a bound as the study gives it: "< 1.5", "> 0", "0-25".
std::string measured_text(const StudyValue& v) {
  const int d = decimals_of(v.metric);
  if (v.measured) return fmt::format("{:.{}f}", *v.measured, d);
  if (v.below && v.above) return fmt::format("{:g}-{:g}", *v.above, *v.below);
  return v.below ? fmt::format("< {:g}", *v.below) : fmt::format("> {:g}", *v.above);
}

std::string error_text(const StudyValue& v) {
  if (!v.error_pct) return v.holds ? "holds" : "FAILS";
  const std::string error = fmt::format("{:+.1f}%", *v.error_pct);
  if (v.calibration) return error + " (fitted on)";
  return v.suspect ? error + " (suspect)" : error;
}

constexpr int kLabelWidth = 13, kNumberWidth = 9;

std::string cells(const StudyValue& v) {
  return fmt::format("  {:<{}} {:>{}} {:>{}} {}", validation::metric_label(v.metric), kLabelWidth,
                     measured_text(v), kNumberWidth,
                     fmt::format("{:.{}f}", v.predicted, decimals_of(v.metric)), kNumberWidth,
                     error_text(v));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

std::string with_study_columns(const std::string& table, const validation::RunStudy& study) {
  const std::vector<std::string> lines = lines_of(table);
  size_t width = 0;
  for (const std::string& line : lines) width = std::max(width, line.size());
  auto padded = [width](const std::string& line) {
    return line + std::string(width - line.size(), ' ');
  };
  std::string out;
  size_t row = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == 0) {
      out += fmt::format("{}  {:<{}} {:>{}} {:>{}} {}\n", padded(lines[i]), "study", kLabelWidth,
                         "measured", kNumberWidth, "predicted", kNumberWidth, "error");
      continue;
    }
    if (lines[i].empty()) {
      out += "\n";
      continue;
    }
    const std::vector<StudyValue>& values = study.by_row.at(row++);
    if (values.empty()) {
      out += lines[i] + "\n";
      continue;
    }
    out += padded(lines[i]) + cells(values.front()) + "\n";
    for (size_t k = 1; k < values.size(); ++k)
      out += std::string(width, ' ') + cells(values[k]) + "\n";
  }
  return out;
}

std::string study_footer(const validation::RunStudy& study) {
  std::string out = fmt::format("\nstudy {}: {} (validation/{}; docs/validation.md)\n",
                                study.suite, study.title, study.suite);
  out += "  measured: the study's value of the row's run; error = (predicted - measured) / "
         "measured; a bound (\"< 1.5\") holds or FAILS\n";
  int shown = 0;
  for (const auto& values : study.by_row) shown += static_cast<int>(values.size());
  if (shown == 0) {
    out += "  none of these rows is a run the study measured\n";
  } else {
    out += fmt::format("  {} points in the error: mean |error| {}; {} bounds: {} hold\n",
                       study.points_in_mape,
                       study.mape_pct ? fmt::format("{:.1f}%", *study.mape_pct) : "-",
                       study.bounds, study.bounds_holding);
  }
  for (const std::string& departure : study.departures)
    out += "  this run departs: " + departure + "\n";
  if (study.readings.empty()) return out;
  std::vector<std::string> followed;
  for (const validation::StudyReading& r : study.readings) {
    if (r.followed) followed.push_back(fmt::format("{} ({})", r.id, r.changes));
  }
  if (followed.empty()) {
    out += fmt::format("readings: the suite's headline ({})\n", study.headline);
  } else {
    out += fmt::format("readings: {}; otherwise the suite's headline ({})\n",
                       fmt::join(followed, "; "), study.headline);
  }
  out += fmt::format("  other readings, each with its evidence in validation/{}/suite.yaml:\n",
                     study.suite);
  size_t id_width = 0;
  for (const validation::StudyReading& r : study.readings)
    id_width = std::max(id_width, r.id.size());
  for (const validation::StudyReading& r : study.readings) {
    if (r.followed) continue;
    out += fmt::format("    {:<{}}  {}: {}\n", r.id, id_width, r.changes,
                       r.select.empty() ? r.why_not : "add " + r.select);
  }
  return out;
}

void add_study_json(nlohmann::ordered_json& doc, const validation::RunStudy& study) {
  using Json = nlohmann::ordered_json;
  auto& results = doc["results"];
  for (size_t i = 0; i < study.by_row.size(); ++i) {
    Json measured = Json::array();
    for (const StudyValue& v : study.by_row[i]) {
      Json m = {{"table", v.table}, {"metric", validation::to_string(v.metric)}};
      if (v.measured) m["measured"] = *v.measured;
      if (v.below) m["below"] = *v.below;
      if (v.above) m["above"] = *v.above;
      m["predicted"] = v.predicted;
      if (v.error_pct) {
        m["error_pct"] = *v.error_pct;
        m["suspect"] = v.suspect;
        m["calibration"] = v.calibration;
      } else {
        m["holds"] = v.holds;
      }
      measured.push_back(std::move(m));
    }
    results.at(i)["measured"] = std::move(measured);
  }
  Json readings = Json::array();
  for (const validation::StudyReading& r : study.readings) {
    readings.push_back({{"id", r.id}, {"changes", r.changes}, {"followed", r.followed},
                        {"select", r.select}, {"why_not", r.why_not}});
  }
  doc["study"] = {{"suite", study.suite},
                  {"title", study.title},
                  {"points_in_error", study.points_in_mape},
                  {"mape_pct", study.mape_pct ? Json(*study.mape_pct) : Json(nullptr)},
                  {"bounds", study.bounds},
                  {"bounds_holding", study.bounds_holding},
                  {"headline", study.headline},
                  {"readings", std::move(readings)},
                  {"departures", study.departures}};
}

}  // namespace gpuscale::cli
