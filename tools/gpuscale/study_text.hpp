// `gpuscale run`'s view of the study an experiment reproduces (validation/src/run_study.hpp):
// the measured value, the prediction and the error beside each row of its table, a footer naming
// the readings the run followed and how to select the others, and the same in its JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "validation/src/run_study.hpp"

namespace gpuscale::cli {

// `table` (sim::rows_table: a header line, then a line per row, blank lines between groups) with
// the study's columns after each row: its first measurement on the row's line, any other on a
// line of its own below.
std::string with_study_columns(const std::string& table, const validation::RunStudy& study);

// What the columns compare, the error over the points shown, and the readings.
std::string study_footer(const validation::RunStudy& study);

// `doc` (run's JSON: {"results": [...]}) with each result's `measured` values and a `study`
// object: the suite, the error over the points shown, the readings and the departures.
void add_study_json(nlohmann::ordered_json& doc, const validation::RunStudy& study);

}  // namespace gpuscale::cli
