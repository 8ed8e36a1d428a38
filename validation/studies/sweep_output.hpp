// What a sweep writes into its output folder, besides the run cache (sweep_runner.hpp):
//  - results.json: {"study", "study_hash", "runs", ["shard"], "rows": [one object per run]};
//  - results.csv: the same rows, one line each (tidy: one column per setting and per measure);
//  - study.yaml: the study resolved, every run spelled out with its hash.
// Rows are the result schema's (sim/experiment/result_schema.hpp) with the study's own columns, by the
// writer `run` uses too. Both results files are rendered from the JSON rows, so a merge of shards
// (which reads them back) writes the same bytes as one sweep of the whole study.
#pragma once

#include <string>
#include <vector>

#include "sim/experiment/result_schema.hpp"
#include "validation/studies/study.hpp"
#include "validation/studies/sweep_row.hpp"
#include "validation/studies/sweep_runner.hpp"

namespace gpuscale::sweep {

// A finished run as the result schema's row: its result, settings and place in the study.
sim::OutputRow output_row(const SweepRow& row);

// Writes results.json, results.csv and study.yaml into `out_dir` (a shard writes its own rows).
void write_sweep_outputs(const Study& study, const SweepOutcome& outcome, const Shard& shard,
                         const std::string& out_dir);

// Joins the output folders of a study's shards into `out_dir`: their rows in study order (each
// run exactly once, or a ConfigError says which are missing or twice), their caches, study.yaml.
void merge_sweep_outputs(const std::vector<std::string>& shard_dirs, const std::string& out_dir);

}  // namespace gpuscale::sweep
