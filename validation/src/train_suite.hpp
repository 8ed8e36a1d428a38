// A validation suite of Megatron-LM training runs (`kind: train` in its suite.yaml): each point a
// published layout of a transformer on a cluster, predicted by `gpuscale train`'s machinery
// (sim/parallel/train_job.hpp) and compared with the published throughput.
//
// This is a second, small kind of suite rather than a point kind inside suite.hpp's: a suite.hpp
// point is a (network, method, GPUs, batch) run of `gpuscale run`, read through a setup of
// batches, datasets, epochs and a framework that a layout of t x p x d GPUs does not have, and its
// metrics are ratios of such runs. A train point carries its own layout and is one `gpuscale
// train` job. The report follows suite.hpp's: error per point, MAPE per table and overall.
// gpuscale fits nothing on these suites: every point is held out.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/parallel/layout.hpp"
#include "topologies/core/error.hpp"
#include "validation/src/suite_history.hpp"

namespace gpuscale::validation {

// tflops_per_gpu: Narayanan et al.'s eq. 3 count per GPU and second (what their Table 1
// reports); model_tflops_per_gpu: model FLOPs (without recomputation, layout.hpp) per GPU and
// second, /1e12 (Megatron-Core's logged throughput); mfu_pct: model FLOPs over the GPUs' tensor
// peak, % (Korthikanti et al.'s MFU); iteration_s: seconds per iteration.
enum class TrainMetric { TflopsPerGpu, ModelTflopsPerGpu, MfuPct, IterationS };
const char* to_string(TrainMetric metric);

struct TrainPoint {
  std::string id;        // the row's label in its table ("1.7B")
  std::string workload;  // a shipped workload or a path
  par::ParallelLayout layout;
  int gpus = 0;          // as the table prints it; checked against t x p x d
  double measured = 0;
  // The table's printed columns, transcribed as they stand (heads, hidden, layers...); the
  // model's dimensions are checked against `heads`, `hidden` and `layers` where given.
  std::map<std::string, double> row;
  std::string note;      // what the source does not state and what was assumed, or what is missing
  std::string skip;      // non-empty: transcribed, not simulated, and why
  Origin origin;
};

struct TrainTable {
  std::string id;
  std::string title;
  std::string source;  // document, table, rows
  TrainMetric metric = TrainMetric::TflopsPerGpu;
  std::string interpretation;
  std::string precision;  // the recipe its runs trained at (empty: each workload's own)
  std::vector<TrainPoint> points;
};

struct TrainSuite {
  std::string name;
  std::string title;
  std::string topology;  // the cluster; grown to each point's GPUs
  std::vector<TrainTable> tables;
  SuiteHistory history;  // its first look and whether it is a development suite
};

// Throws ConfigError with file and line for unknown keys, bad values, a layout that gpuscale
// train would refuse, and a row whose printed dimensions disagree with its workload.
TrainSuite load_train_suite(const std::string& name_or_path);

struct TrainPointResult {
  TrainPoint point;
  std::string table;
  std::optional<double> predicted;  // empty when skipped
  std::optional<double> error_pct;
  double iteration_s = 0, mfu = 0, tflops_per_gpu = 0, bubble = 0, memory_per_gpu = 0;
  bool fits = true;
  double wall_s = 0;
};

struct TrainComparison {
  std::vector<TrainPointResult> points;
  std::map<std::string, std::optional<double>> mape_pct;  // per table id, and "overall"
  double wall_s = 0;
};

// Every point simulated (run_train_job), compared with its measurement. `progress` is called
// after each point.
TrainComparison compare_train_suite(
    const TrainSuite& suite, const std::function<void(int done, int total)>& progress = {});

std::string train_comparison_table(const TrainSuite& suite, const TrainComparison& c);
std::string train_comparison_json(const TrainSuite& suite, const TrainComparison& c);

}  // namespace gpuscale::validation
