// A small validation suite written to a temporary folder, and predictions made by hand, for the
// tests of the harness (validation/src): two networks, two methods, 1/2/4/8 GPUs, batches 16/32,
// one speedup table and one claim of each form.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "validation/src/metrics.hpp"
#include "validation/src/suite.hpp"

namespace gpuscale::validation::testing {

// The files by name; tests edit a copy to make one mistake.
std::map<std::string, std::string> tiny_suite_files();

// Writes the files into a fresh temporary folder; returns the folder.
std::string write_suite(const std::map<std::string, std::string>& files);

// The error of loading the suite in `dir`, checked to be one line starting at `file`:`line`.
std::string load_error_at(const std::string& dir, const std::string& file, int line);

// Every run of the tiny suite predicted by `run`; every largest batch is `largest_batch`.
using RunModel = std::function<PredictedRun(const RunKey&)>;
Metrics metrics_of(const Suite& suite, const RunModel& run, int largest_batch = 100);

// Perfect scaling: 10 ms FP+BP and 1 ms WU per iteration at every GPU count and batch; memory
// 1 GB before training, 3 GB on GPU0, 2 GB on the others.
PredictedRun ideal_run(const RunKey& run);

}  // namespace gpuscale::validation::testing
