#include "validation/src/comparison.hpp"

#include <cmath>

namespace gpuscale::validation {

double error_pct(double measured, double predicted) {
  return 100 * (predicted - measured) / measured;
}

std::optional<double> mape_pct(const std::vector<PointResult>& points, bool calibration) {
  double sum = 0;
  int counted = 0;
  for (const PointResult& p : points) {
    if (p.point.suspect || p.calibration != calibration) continue;
    sum += std::abs(p.error_pct);
    ++counted;
  }
  if (counted == 0) return std::nullopt;
  return sum / counted;
}

namespace {

// The table's points predicted under `reading`: the metric's mean over the reading's GPU counts.
std::vector<PointResult> read_otherwise(const Table& table, const std::vector<PointResult>& points,
                                        const AlternativeReading& reading, const Metrics& metrics) {
  std::vector<PointResult> results = points;
  for (PointResult& r : results) {
    double sum = 0;
    for (int g : reading.gpus) {
      StudyRun run = r.point;
      run.gpus = g;
      sum += metrics.predicted(table, run);
    }
    r.predicted = sum / static_cast<double>(reading.gpus.size());
    r.error_pct = error_pct(r.point.measured, r.predicted);
  }
  return results;
}

}  // namespace

Comparison compare(const Suite& suite, const Metrics& metrics,
                   const wl::Calibration& calibration) {
  Comparison c;
  for (const Table& table : suite.tables) {
    std::vector<PointResult> points;
    for (const Point& p : table.points) {
      const double predicted = metrics.predicted(table, p);
      points.push_back({table.id, p, predicted, error_pct(p.measured, predicted),
                        calibration.has_point(suite.name, p.id)});
    }
    TableSummary summary;
    summary.id = table.id;
    summary.title = table.title;
    summary.mape_pct = mape_pct(points);
    summary.calibration_mape_pct = mape_pct(points, true);
    for (const PointResult& p : points) {
      if (p.point.suspect)
        ++summary.suspect_points;
      else
        ++(p.calibration ? summary.calibration_points : summary.points_in_mape);
    }
    for (const Bound& b : table.bounds) {
      const double predicted = metrics.predicted(table, b);
      c.bounds.push_back({table.id, b, predicted, b.holds(predicted)});
      ++summary.bounds;
      summary.bounds_holding += c.bounds.back().holds ? 1 : 0;
    }
    c.tables.push_back(summary);
    for (const AlternativeReading& reading : table.alternatives)
      c.alternatives.push_back({table.id, reading, mape_pct(read_otherwise(table, points, reading, metrics))});
    c.points.insert(c.points.end(), points.begin(), points.end());
  }
  c.overall_mape_pct = mape_pct(c.points);
  c.calibration_mape_pct = mape_pct(c.points, true);
  for (const TableSummary& t : c.tables) {
    c.overall_points += t.points_in_mape;
    c.calibration_points += t.calibration_points;
  }
  for (const Claim& claim : suite.claims) c.claims.push_back(evaluate_claim(claim, metrics));
  return c;
}

}  // namespace gpuscale::validation
