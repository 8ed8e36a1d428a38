// Measured against predicted: every point with its error, every bound with whether it holds,
// the MAPE of each table and of all points, and the claims' verdicts.
//   error_pct = 100 x (predicted - measured) / measured
//   MAPE      = mean |error_pct| over a table's validation points (overall: over every table's);
//               suspect points are shown but left out, bounds are pass/fail and never in it.
// A point the framework's calibration set names (wl::Calibration) is a calibration point: a
// fitted host cost was fitted on it, so its error is reported apart and never in the MAPE.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "validation/src/claims.hpp"
#include "validation/src/metrics.hpp"
#include "validation/src/suite.hpp"
#include "workloads/src/framework.hpp"

namespace gpuscale::validation {

struct PointResult {
  std::string table;
  Point point;
  double predicted = 0;
  double error_pct = 0;
  bool calibration = false;  // in the framework's calibration set
};

struct BoundResult {
  std::string table;
  Bound bound;
  double predicted = 0;
  bool holds = false;
};

// A table's points under one of its alternative readings (suite.hpp).
struct AlternativeSummary {
  std::string table;
  AlternativeReading reading;
  std::optional<double> mape_pct;  // over the same points as the table's own MAPE
};

struct TableSummary {
  std::string id, title;
  std::optional<double> mape_pct;  // validation points; nullopt: none count
  int points_in_mape = 0;
  std::optional<double> calibration_mape_pct;  // calibration points; nullopt: none
  int calibration_points = 0;
  int suspect_points = 0;
  int bounds = 0;
  int bounds_holding = 0;
};

struct Comparison {
  std::vector<PointResult> points;
  std::vector<BoundResult> bounds;
  std::vector<TableSummary> tables;
  std::optional<double> overall_mape_pct;  // validation points only: the headline
  int overall_points = 0;
  std::optional<double> calibration_mape_pct;
  int calibration_points = 0;
  std::vector<AlternativeSummary> alternatives;
  std::vector<ClaimResult> claims;
};

// The whole comparison again under one of the setup's alternative readings (suite.hpp).
struct SetupReadingResult {
  SetupAlternative reading;
  Comparison comparison;
};

double error_pct(double measured, double predicted);
// Mean |error_pct| of the points of the role (calibration or validation) that are not suspect;
// nullopt if there are none.
std::optional<double> mape_pct(const std::vector<PointResult>& points, bool calibration = false);

Comparison compare(const Suite& suite, const Metrics& metrics,
                   const wl::Calibration& calibration = {});

}  // namespace gpuscale::validation
