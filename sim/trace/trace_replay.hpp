// An imported iteration (workloads/interop/trace_graph.hpp) replayed on a machine: rank 0's graph
// stands for every rank's (each runs the same kernels on the same shapes), its kernels run on
// rank 0's GPU, and each collective runs the registry's schedule of the chosen comm method over
// every GPU of the job, on the machine's links, once its dependencies are done on rank 0.
// Above kFullComputeUpToGpus GPUs, lock-step schedules are evaluated from their link loads
// (ScheduleCompiler::append_lock_step), as the training replay does (docs/replay.md, "Symmetry
// above 16 GPUs"); up to there every flow is simulated.
#pragma once

#include <string>

#include "sim/experiment/machine_setup.hpp"
#include "topologies/src/routing.hpp"
#include "workloads/interop/trace_graph.hpp"

namespace gpuscale::sim {

struct TraceMachine {
  const topo::Topology* machine = nullptr;
  const topo::Router* router = nullptr;
  Placement placement;            // the job's GPUs in rank order, their nodes and NCCL rings
  std::string algorithm = "nccl_ring";  // the registry's, for the collectives it implements
  std::string protocol = "auto";  // NCCL protocol (protocol_choice.hpp)
  double reduce_bandwidth_Bps = 0;  // a reduction's GPU rate (schedules that reduce apart)
};

struct TraceResult {
  double iteration_s = 0;
  double compute_s = 0;         // while rank 0's GPU ran kernels
  double communication_s = 0;   // while a collective or message of rank 0 was under way
  double exposed_communication_s = 0;  // communication while no kernel ran
  int kernels = 0, collectives = 0, messages = 0;
  long activities = 0;          // SimGrid activities started
};

// Creates the SimGrid engine: once per process (wrap in run_isolated). Throws ConfigError when a
// message names a rank the job does not have; a collective the algorithm does not implement
// runs NCCL's ring (nccl_ring implements them all).
TraceResult replay_trace(const interop::TraceGraph& graph, const TraceMachine& machine);

}  // namespace gpuscale::sim
