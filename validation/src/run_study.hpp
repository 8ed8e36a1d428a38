// A `gpuscale run` set beside the measurements of the study it reproduces (an experiment's
// `study:`, or `run --study`): every point and bound of the suite's tables whose runs the
// experiment simulated, with gpuscale's prediction and its error, computed by the harness's own
// metrics (metrics.hpp) from the run's rows; and which of the study's readings the run followed.
//
// A row stands for a run of the study when its machine is one of the study's (by topology), its
// workload is the one a network of the study maps to (under the readings the run follows), its
// exchange one of the study's methods, at the study's precision and framework. Rows of other
// workloads or machines simply show no measurement; what the run changes of the study's setup
// is listed (`departures`), so that an error is never read as the model's when it is a what-if's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/experiment/experiment.hpp"
#include "validation/src/comparison.hpp"
#include "validation/src/suite.hpp"

namespace gpuscale::validation {

// A measurement of the study beside a row.
struct StudyValue {
  std::string table;  // the suite's table
  Metric metric = Metric::Speedup;
  std::optional<double> measured;      // a point's value
  std::optional<double> below, above;  // a bound's limits
  double predicted = 0;
  std::optional<double> error_pct;  // a point's
  bool holds = true;                // a bound's
  bool suspect = false;             // a point the suite leaves out of its MAPE
  bool calibration = false;         // a point the framework's host costs were fitted on
};

// Another reading of the study's setup (suite.hpp's SetupAlternative), as the run can select it.
struct StudyReading {
  std::string id;
  std::string changes;  // in words: "39 decode threads"
  std::string select;   // the flags that select it; empty: `run` cannot (see `why_not`)
  std::string why_not;
  bool followed = false;  // this run reads the study so
};

struct RunStudy {
  std::string suite;  // its name
  std::string title;
  std::vector<std::vector<StudyValue>> by_row;  // the run's rows, in order
  std::optional<double> mape_pct;  // over the points shown, as `validate` counts a MAPE
  int points_in_mape = 0;
  int bounds = 0, bounds_holding = 0;
  // The suite's headline reading of what the alternatives vary and the readings the run
  // follows do not change, in words.
  std::string headline;
  std::vector<StudyReading> readings;
  std::vector<std::string> departures;  // what the run changes of the study's setup
};

// Throws ConfigError only through loading what the suite names (its framework, workloads).
RunStudy compare_run_with_study(const Suite& suite, const sim::Experiment& e,
                                const std::vector<sim::ResultRow>& rows);

// A metric's short name for a table column: "speedup", "GPU0 GB".
const char* metric_label(Metric metric);

}  // namespace gpuscale::validation
