// The columns of a result row, declared once: what `gpuscale run` and `gpuscale sweep` write as
// JSON and CSV, and the tables they print, each a view (a list of column keys) of them. The writer
// (result_writer.hpp) renders all three from this one table.
//
// A sweep's row is the study's own columns (index, hash, machine) and the run's; a run's row is
// the run's alone. Both carry the settings a configuration ran with (routing, fusion_mb, protocol,
// decode_threads) beside what the simulation predicted.
//
// Contract: a column's value is a JSON value (a string, an integer, a flag, a double, or for a
// nested column an object); JSON writes it as it is, CSV writes a double with 9 significant
// digits (the precision every quantity has always had in results.csv) and the rest as JSON does,
// a table by its TableFormat.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/experiment/experiment.hpp"

namespace gpuscale::sim {

// Where a study's run sits in it: the columns only a sweep's rows have.
struct StudyPlace {
  size_t index = 0;     // in the study's runs
  std::string hash;     // of the run's inputs (validation/studies/run_hash.hpp)
  std::string machine;  // the study's label of the run's machine
};

// The settings of a configuration that a row shows beside its result.
struct RunSettings {
  std::string routing;    // "default": the machine's own
  double fusion_mb = 0;   // allreduce_buffer_mb
  std::string protocol;   // as asked for ("auto" unresolved)
  int decode_threads = 0;
  std::string input_pipeline;  // "cpu" or "dali"
};
RunSettings run_settings_of(const Experiment& experiment);

// One row to write: a configuration's result (speedup set), its settings, and for a study's run
// its place in the study.
struct OutputRow {
  const ResultRow* result = nullptr;
  RunSettings settings;
  std::optional<StudyPlace> study;
};

// Which rows and outputs hold a column.
enum class Shown {
  Always,    // every row, in JSON and CSV
  Study,     // a study's rows only (sweep)
  Sampled,   // JSON: a sampled run's rows (Experiment::samples); CSV: when the first row is one
  Split,     // JSON: every row; CSV: when a row splits samples (spatial > 1), after every other
             // column (results.csv gained it last, and keeps its place)
  JsonOnly,  // a nested object: no CSV cell holds it
  TableOnly  // a figure only a table prints
};

// How a table prints a column: its header and values aligned in `width`, a double as value x
// scale with `decimals` decimals, a flag as yes / NO, text and integers as they are.
struct TableFormat {
  std::string_view header;  // empty: no table shows the column
  int width = 0;
  bool left = false;  // left-aligned (names); right-aligned (numbers) otherwise
  double scale = 1;
  int decimals = 2;
  bool dash_on_one_gpu = false;  // "-" on one GPU, where the figure has nothing to measure
};

struct Column {
  std::string_view key;  // JSON key, CSV header
  Shown shown = Shown::Always;
  nlohmann::ordered_json (*read)(const OutputRow& row) = nullptr;
  TableFormat table{};
};

// Every column, in the order JSON and CSV write them.
const std::vector<Column>& result_columns();
// The column named `key`; throws std::logic_error for a key the schema lacks (our bug).
const Column& result_column(std::string_view key);

// A column as a table view shows it: the schema's format, or with another header and width; or,
// for a study's axes, the value as JSON holds it (a number as {:g}) under its key, as wide as its
// widest cell.
struct ViewColumn {
  std::string_view key;
  std::string_view header = {};  // empty: the schema's
  int width = 0;                 // 0: the schema's
  bool as_written = false;
};

// The tables `run` prints: one row per configuration, and a sampled run's spread.
const std::vector<ViewColumn>& run_table_view();
const std::vector<ViewColumn>& spread_table_view();
// What a sweep's table prints after the study's axes.
const std::vector<ViewColumn>& sweep_table_measures();

}  // namespace gpuscale::sim
