// Measured against predicted: every point with its error, every bound with whether it holds,
// the MAPE of each table and of all points, and the claims' verdicts.
//   error_pct = 100 x (predicted - measured) / measured
//   MAPE      = mean |error_pct| over a table's points (overall: over every table's points);
//               suspect points are shown but left out, bounds are pass/fail and never in it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "validation/src/claims.hpp"
#include "validation/src/metrics.hpp"
#include "validation/src/suite.hpp"

namespace gpuscale::validation {

struct PointResult {
  std::string table;
  Point point;
  double predicted = 0;
  double error_pct = 0;
};

struct BoundResult {
  std::string table;
  Bound bound;
  double predicted = 0;
  bool holds = false;
};

struct TableSummary {
  std::string id, title;
  std::optional<double> mape_pct;  // nullopt: no point counts (bounds only, or all suspect)
  int points_in_mape = 0;
  int suspect_points = 0;
  int bounds = 0;
  int bounds_holding = 0;
};

struct Comparison {
  std::vector<PointResult> points;
  std::vector<BoundResult> bounds;
  std::vector<TableSummary> tables;
  std::optional<double> overall_mape_pct;
  int overall_points = 0;
  std::vector<ClaimResult> claims;
};

double error_pct(double measured, double predicted);
// Mean |error_pct| of the points that are not suspect; nullopt if there are none.
std::optional<double> mape_pct(const std::vector<PointResult>& points);

Comparison compare(const Suite& suite, const Metrics& metrics);

}  // namespace gpuscale::validation
