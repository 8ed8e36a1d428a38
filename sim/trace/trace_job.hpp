// An imported iteration replayed on a machine laid out as `gpuscale run` lays a job
// (machine_setup.hpp), in a child process (run_isolated): what `gpuscale replay-trace` prints.
#pragma once

#include <string>
#include <vector>

#include "sim/trace/trace_replay.hpp"
#include "workloads/interop/trace_graph.hpp"

namespace gpuscale::sim {

struct TraceJob {
  std::string topology = "dgx-h200";            // a shipped machine or a .yaml file
  std::vector<std::string> topology_overrides;  // --set on the machine
  int gpus = 8;
  std::string comm = "nccl";                    // a --comm alias (sim/exchange/exchange_choice.hpp)
  std::string protocol = "auto";                // NCCL protocol: auto, ll, ll128, simple, ideal
};

struct TraceJobResult {
  std::string topology;  // the machine's name
  std::string gpu;       // its GPUs' model
  TraceResult replay;
  double wall_s = 0;     // host time of the simulation, set-up included
};

// Throws ConfigError for bad input: an unknown machine or comm method (before forking), GPUs
// that do not fit the machine, a message to a rank the job lacks.
TraceJobResult run_trace_job(const interop::TraceGraph& graph, const TraceJob& job);

}  // namespace gpuscale::sim
