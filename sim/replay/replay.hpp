// The replay engine: data-parallel training iterations of one workload on some GPUs of one
// machine, simulated on SimGrid.
//
// Each GPU's compute stream runs the iteration graph's forward and backward tasks in issue order
// (workloads/src/iteration_graph.hpp), kernel times from the compute-time model; weight updates
// run beside the stream as soon as their tensor is exchanged; the next iteration's forward of a
// layer waits for that layer's updates (MXNet's dependency engine). Gradients are exchanged with
// a collective algorithm (sim/collectives), whose schedule becomes SimGrid activities over the
// machine's real links:
//  - kvstore methods (p2p, nccl_reduce_bcast) exchange each tensor alone as soon as every GPU
//    has its gradient, as MXNet's kvstore does; p2p reduces each tensor on the GPU MXNet's greedy
//    rule assigns it (workloads/src/reducer_assignment.hpp);
//  - allreduce methods (nccl, nccl_tree, the MPI family) go through Horovod-style tensor fusion:
//    every `fusion_cycle_s` the gradients ready so far are packed, in ready order, into buffers of
//    at most `fusion_bytes` (a larger tensor alone), and the buffers are allreduced one after
//    another; fusion_bytes = 0 allreduces each tensor alone as soon as it is ready, one after
//    another on one communication stream (no fusion cycle).
// Symmetry: above kFullComputeUpToGpus GPUs every GPU's compute stream is taken to be rank 0's,
// so only rank 0's is simulated and a tensor is ready everywhere when it is ready on rank 0 (the
// collectives still run over every GPU and link). This keeps a 512-GPU iteration at O(layers +
// collective flows) activities. It is exact for allreduce methods; for p2p it drops one effect,
// the slowdown of the other reducer GPUs' kernels by the reductions they run.
// Iterations are simulated back to back; the steady-state iteration time is the mean spacing of
// the ends of iterations 2..N (the first warms the pipeline: it has no previous update to wait
// for). Call replay_iterations in a process of its own: SimGrid allows one engine per process
// (experiment.hpp forks one per configuration).
#pragma once

#include <string>
#include <vector>

#include "sim/collectives/protocol.hpp"
#include "sim/compute/compute_model.hpp"
#include "sim/replay/timeline.hpp"
#include "topologies/src/routing.hpp"
#include "workloads/src/iteration_graph.hpp"
#include "workloads/src/reducer_assignment.hpp"

namespace gpuscale::sim {

inline constexpr int kFullComputeUpToGpus = 16;

struct ReplaySetup {
  const topo::Topology* topology = nullptr;
  const topo::Router* router = nullptr;
  std::vector<int> gpus;                     // device indices, in rank order
  std::vector<std::vector<int>> rings;       // channel rings over ranks (nccl_* methods)
  std::vector<int> node_of_rank;
  const wl::Workload* workload = nullptr;
  const wl::WorkloadCosts* costs = nullptr;
  const compute::ComputeTimeModel* compute = nullptr;
  int batch = 32;                            // per GPU
  std::string comm = "p2p";                  // a collective algorithm name (registry.hpp)
  wl::ReducerPolicy reducers = wl::ReducerPolicy::Greedy;
  double fusion_bytes = 64e6;                // Horovod <= 0.20: 64 MB (brief §7)
  double fusion_cycle_s = 5e-3;              // Horovod <= 0.20: 5 ms (brief §7)
  std::string protocol = "auto";             // NCCL protocol: auto, ll, ll128, simple, ideal
  int iterations = 3;
  bool record_timeline = false;              // fill ReplayResult::timeline
};

// Whether `comm` exchanges per tensor like MXNet's kvstore (no fusion) or allreduces.
bool is_kvstore_method(const std::string& comm);
// The names `--comm` accepts: the registry's, with `nccl` for the NCCL ring allreduce.
std::vector<std::string> comm_method_names();
// The registry name of a comm method ("nccl" -> "nccl_ring"); throws ConfigError if unknown.
std::string algorithm_of(const std::string& comm);

struct LinkLoad {
  int link = 0;
  bool forward = true;
  double bytes_per_iteration = 0;
};

struct ReplayResult {
  double iteration_s = 0;     // steady state
  double fpbp_s = 0;          // rank 0's forward and backward kernels (last iteration), run times
  double wu_s = 0;            // iteration_s - fpbp_s: exchange and updates not hidden, waits
  double compute_s = 0;       // rank 0's kernels of one iteration, alone (no communication)
  double exposed_comm_s = 0;  // iteration_s - compute_s, at least 0
  long activities = 0;        // SimGrid activities started
  int simulated_compute_gpus = 0;
  std::vector<LinkLoad> link_loads;  // links that carried gradient bytes
  std::vector<TimelineEvent> timeline;  // if asked for: replay_timeline.hpp
};

// Simulates setup.iterations iterations. Creates the SimGrid engine: once per process.
ReplayResult replay_iterations(const ReplaySetup& setup);

}  // namespace gpuscale::sim
