// `gpuscale train`: one Megatron-LM layout of a transformer on a machine, or every valid layout of
// a GPU count, each checked (layout.hpp), its memory per GPU estimated (parallel_memory.hpp) and
// one iteration simulated in a child process (pipeline_sim.hpp; SimGrid keeps one engine per
// process). Stage times come from the compute model at the micro-batch (docs/parallelism.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/parallel/layout.hpp"
#include "sim/parallel/parallel_memory.hpp"
#include "sim/parallel/pipeline_sim.hpp"
#include "topologies/core/config_tree.hpp"

namespace gpuscale::par {

struct TrainJob {
  std::string topology = "dgx-h200-superpod";
  std::vector<std::string> overrides;  // --set on the machine
  // A machine held in memory (`gpuscale serve`'s what-if, `base:` resolved); `topology` names it.
  std::shared_ptr<const ConfigNode> topology_document;
  std::string workload = "gpt3-175b";
  // The precision recipe (--precision), as Megatron-LM runs it (workloads/frameworks/
  // megatron-lm.yaml); empty: the workload's own `precision:`.
  std::string precision;
  ParallelLayout layout;
  std::string protocol = "auto";
};

struct StageTimes {
  double forward_s = 0, backward_s = 0;  // kernels per micro-batch (backward: with recomputation)
  double weight_cast_s = 0;              // FP8 weight casts, once per iteration
};

struct TrainResult {
  std::string topology;
  std::string gpu;
  std::string precision;          // the recipe it ran
  std::string precision_runs_as;  // and what Megatron-LM runs for it
  ParallelLayout layout;
  int micro_batches = 0;
  PipelineResult sim;
  std::vector<StageTimes> stage_times;
  double bubble_closed_form = 0;
  std::vector<StageMemory> memory;
  double memory_per_gpu = 0;  // the fullest stage's
  double gpu_memory = 0;
  bool fits = false;
  double tokens_per_s = 0;
  double mfu = 0;                  // model FLOPs (layout.hpp) / (time x GPUs x tensor peak)
  double tflops_per_gpu_eq3 = 0;   // Narayanan et al.'s eq. 3 count per GPU and second, /1e12
  double tp_comm_s = 0;            // per stage and iteration: its passes' tensor allreduces
  double pp_comm_s = 0;            // per iteration: one stage's activation and gradient sends
  double dp_comm_s = 0;            // the slowest stage's data-parallel exchange
  double wall_s = 0;               // host time of the simulation
};

// Throws ConfigError for an invalid layout (one line) or bad input.
TrainResult run_train_job(const TrainJob& job);

// Every valid layout of `gpus` GPUs with t in `tps` and p in `pps` (empty: any), the job's other
// settings, simulated and sorted by iteration time. Throws ConfigError when none is valid.
std::vector<TrainResult> run_layout_sweep(const TrainJob& base, int gpus, const std::vector<int>& tps,
                                          const std::vector<int>& pps);

}  // namespace gpuscale::par
