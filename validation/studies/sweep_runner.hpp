// Runs a study's runs (or one shard of them) in parallel child processes, reusing every result
// whose run hash (run_hash.hpp) is already in the output folder's cache, OUT/runs/HASH.json, so a
// study can be extended and resumed: only new or changed runs are simulated.
//
// Speedups are against the same run on one GPU; a shard simulates (or finds cached) the one-GPU
// runs its rows need itself, so shards' rows are complete on their own and merge by concatenation.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "validation/studies/study.hpp"
#include "validation/studies/sweep_row.hpp"

namespace gpuscale::sweep {

struct Shard {
  int index = 0;  // 0-based: runs whose study index % count == index
  int count = 1;
};

struct SweepOptions {
  std::string out_dir;
  int jobs = 1;  // simulations at once
  Shard shard;
};

struct SweepProgress {
  size_t finished = 0;  // simulations done so far
  size_t to_simulate = 0;
  size_t cached = 0;    // results found in the cache
};

struct SweepOutcome {
  std::vector<std::string> run_hashes;  // of every run of the study, the shard's or not, in order
  std::vector<SweepRow> rows;           // the shard's runs, in study order
  size_t simulated = 0;
  size_t cached = 0;
};

// Throws ConfigError for a run that cannot be simulated (its message names the run), or a
// result that cannot be written; results finished before it stay cached. Each cache file is
// written whole or not at all (core/output_file.hpp), and the temporary files of a killed sweep
// are removed; a cache file that holds no whole result (`warn` says which) is simulated again.
// The caller holds the folder's lock (output_lock.hpp).
SweepOutcome run_sweep(const Study& study, const SweepOptions& options,
                       const std::function<void(const SweepProgress&)>& progress = nullptr,
                       const std::function<void(const std::string&)>& warn = nullptr);

// "c4140-b resnet-50 p2p 8 GPUs batch 32" (and routing, fusion when set): a run in messages.
std::string describe(const Run& run);

}  // namespace gpuscale::sweep
