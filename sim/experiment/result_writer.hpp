// The one writer of result rows (result_schema.hpp): as JSON objects, as CSV and as tables, for
// `gpuscale run` and `gpuscale sweep` alike. The same rows give the same bytes.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/experiment/result_schema.hpp"

namespace gpuscale::sim {

using JsonRow = nlohmann::ordered_json;

// The row's columns in the schema's order: those its row holds (Shown), none a table alone shows.
JsonRow row_json(const OutputRow& row);

// `rows`, run by `experiment`, each with its workload's framework settings (no study beside).
std::vector<OutputRow> output_rows(const std::vector<ResultRow>& rows,
                                   const Experiment& experiment);

// What `gpuscale run --format json` prints of `rows` (and `gpuscale serve` answers): the seed of a
// sampled run, then the rows as row_json writes them.
nlohmann::ordered_json results_json(const std::vector<OutputRow>& rows,
                                    const Experiment& experiment);

// Whose rows a CSV holds: a study's have the study's columns, even a study's shard with no rows.
enum class RowsOf { Run, Study };

// The rows as CSV (RFC 4180): a header, then a record per row. It reads rows as row_json wrote
// them, so that rows read back from a results.json (a merge of shards) write the same bytes.
std::string rows_csv(const std::vector<JsonRow>& rows, RowsOf rows_of);

// A table of `view`'s columns, separated by a space: a header line, then a line per row; with
// `blank_line_between_methods`, a blank line where the machine, the workload or the method
// changes. Throws std::logic_error for a view column no table shows (our bug).
std::string rows_table(const std::vector<OutputRow>& rows, const std::vector<ViewColumn>& view,
                       bool blank_line_between_methods);

}  // namespace gpuscale::sim
