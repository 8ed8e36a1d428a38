// One data-parallel training iteration of one GPU as a graph of tasks (no SimGrid here: the replay
// engine turns it into simulated activities).
//
// Forward (FP) runs layer by layer. Backward (BP) runs in reverse; each layer's weight gradient is
// ready as soon as its backward-weights task ends, so the gradient exchange of that tensor can
// overlap the rest of BP, as MXNet's dependency engine and Horovod do. Each parameter tensor is
// then exchanged across the GPUs and updated (weight update, WU). On one GPU there is no exchange.
//
// Within a layer, backward-weights runs before backward-data, the order of MXNet's cuDNN
// convolution (src/operator/nn/cudnn/cudnn_convolution-inl.h: bias, filter, then data gradient),
// which makes gradients ready earliest.
#pragma once

#include <vector>

#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::wl {

enum class TaskKind { Forward, BackwardWeights, BackwardData, Exchange, Update };
const char* to_string(TaskKind kind);

struct Task {
  TaskKind kind = TaskKind::Forward;
  int layer = -1;           // the layer it computes (Exchange, Update: the tensor's layer)
  int tensor = -1;          // Exchange, Update: index into WorkloadCosts::tensors
  std::vector<int> deps;    // indices of tasks that must end first
};

// Contract: `tasks` is in a topological order (deps point to earlier tasks only). Forward and
// Backward* tasks appear in the order one GPU's compute stream issues them; Exchange and Update
// tasks run as soon as their dependencies end.
struct IterationGraph {
  std::vector<Task> tasks;
  int gpus = 1;
};

IterationGraph build_iteration_graph(const Workload& workload, const WorkloadCosts& costs, int gpus);

}  // namespace gpuscale::wl
