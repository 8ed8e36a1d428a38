// What a replay measures once its graph has run (ReplayResult): the steady-state iteration time,
// the study's FP+BP / WU split of rank 0's GPU, its wait for input, the links' loads and the
// gradient allreduces' sizes.
#pragma once

#include <vector>

#include "sim/engine/dag_executor.hpp"
#include "sim/replay/replay.hpp"

namespace gpuscale::sim {

// One iteration's nodes the measurements read.
struct IterationNodes {
  using NodeId = DagExecutor::NodeId;
  std::vector<NodeId> rank0_fpbp;     // rank 0's forward and backward kernels
  std::vector<NodeId> ends;           // every node the iteration ends with
  NodeId batch_decoded = -1;          // process 0's batch, out of the decode threads
  std::vector<NodeId> rank0_weights;  // each tensor's new weights on rank 0's GPU
};

// A gradient allreduce of `bytes` that starts once node `start` is done.
struct GradientAllreduce {
  DagExecutor::NodeId start = -1;
  double bytes = 0;
};

struct ReplayMeasureInputs {
  const DagExecutor* dag = nullptr;
  const std::vector<IterationNodes>* iterations = nullptr;
  bool samples_vary = false;  // a sampled run whose iterations differ (VariabilityDraws)
  double compute_s = 0;       // rank 0's kernels of one iteration, alone
  // The shortest iteration the run can sustain: its decode threads' time per batch (0: none).
  double min_iteration_s = 0;
  int compute_ranks = 1;
  const std::vector<double>* link_bytes = nullptr;  // ScheduleCompiler::link_bytes
  const std::vector<GradientAllreduce>* gradient_allreduces = nullptr;
};

ReplayResult measure_replay(const ReplayMeasureInputs& in);

}  // namespace gpuscale::sim
