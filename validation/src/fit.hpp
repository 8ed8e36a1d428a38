// Fitting a framework's (B) parameters on its declared calibration set (`gpuscale fit`).
//
// The framework file names the fitted parameters (`fitted: true`, each with its sourced range:
// host costs, the context's memory) and the calibration points (`calibration.points`, by suite);
// every other point of every suite is validation. The fit minimises the mean squared log error,
// mean(ln(predicted / measured))^2, over the calibration points, one parameter at a time
// (golden-section search in log space inside its range, sweeps until none moves by more than
// 0.5%). It never leaves the range: a parameter whose best value is at the range's edge is
// reported as such, because a fitted value that wants to leave its sourced range means the model
// lacks a mechanism, and `write_fit` then refuses to write. A parameter the calibration points
// do not depend on is left where it was and said so.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "workloads/src/framework.hpp"

namespace gpuscale::validation {

struct FittedParameter {
  enum class Outcome {
    Fitted,        // inside its range
    AtEdge,        // the best value lies on the range's edge: a mechanism is missing
    Undetermined,  // moving it across its range moves no calibration point by 1 percentage
                   // point: left as it was
  };
  std::string name;
  wl::ParameterUnit unit = wl::ParameterUnit::Seconds;
  double before = 0, after = 0, low = 0, high = 0;  // seconds or bytes
  Outcome outcome = Outcome::Fitted;
};
const char* to_string(FittedParameter::Outcome outcome);

struct FitResult {
  wl::FrameworkConfig framework;  // with the fitted values
  std::vector<FittedParameter> parameters;
  std::vector<std::pair<wl::SuitePoint, double>> residuals_pct;  // per calibration point
  int evaluations = 0;  // simulations of the calibration set

  bool any_at_edge() const;
};

// `progress(evaluations)` after each simulation of the calibration set (for stderr).
// Throws ConfigError when the framework has no calibration set, names a suite or a point that
// does not exist, or fits nothing.
FitResult fit_framework(const std::string& framework_name_or_path,
                         const std::function<void(int)>& progress = nullptr);

// Writes the fitted values into the framework file, each on its own line, and the provenance
// (`calibration.fit`: the date and each calibration point's error) as the calibration block's
// last key; the file is replaced whole, after the new text has loaded. Throws ConfigError if a
// parameter is at its range's edge (nothing is written then).
void write_fit(const FitResult& result, const std::string& date);

}  // namespace gpuscale::validation
