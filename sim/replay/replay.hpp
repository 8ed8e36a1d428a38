// The replay engine: data-parallel training iterations of one workload on some GPUs of one
// machine, simulated on SimGrid, as the framework (workloads/src/framework.hpp) executes them.
//
// The host is part of the simulated machine (docs/replay.md, "The host"):
//  - the framework's Python thread (one per process) runs the training loop in program order:
//    it waits for the next batch from the input pipeline, issues each GPU's forward and backward,
//    pushes, updates and pulls every key, and reads each GPU's metric back (a blocking sync);
//  - engine worker threads per GPU (compute and copy pools, host_threads.hpp) run each GPU
//    operation: the engine's own cost, one launch per kernel, the GPU work, then the
//    cudaStreamSynchronize that MXNet 1.x ends every GPU operation with; forward and backward
//    kernels go in bulked segments, one engine operation each, cut where MXNet cuts them (at
//    every layer's parameters); a framework without per-operation syncs (PyTorch) frees the
//    thread once an operation is issued, the GPU stream keeping the order;
//  - the input pipeline's decode threads fill a prefetch queue, batch after batch; a batch is
//    copied to each GPU (host to device) by that GPU's copy pool.
// A kernel cannot start before its launch, a gradient is ready when its segment has synced, and
// the next iteration's forward of a layer waits for that layer's new weights. Gradients are
// exchanged with a collective algorithm (sim/collectives), whose schedule becomes SimGrid
// activities over the machine's real links:
//  - kvstore methods (p2p, nccl_reduce_bcast) run per key as MXNet's kvstore does: p2p copies
//    each GPU's gradient to the key's reducer (MXNet's greedy rule,
//    workloads/src/reducer_assignment.hpp), sums, updates once there and copies the weights back;
//    nccl_reduce_bcast reduces to GPU0 under one CPU-priority thread, updates there, broadcasts;
//  - allreduce methods (nccl, nccl_tree, the MPI family) group gradients as the framework says
//    (wl::AllreduceModel): Horovod's fusion, every cycle the gradients ready so far packed in
//    ready order into buffers of at most `buffer` bytes (a larger tensor alone); or DDP's
//    buckets, filled in ready order and each allreduced once complete, strictly in order; the
//    allreduces run one after another on one stream; a buffer of 0 allreduces each tensor alone
//    as soon as it is ready.
// Symmetry: above kFullComputeUpToGpus GPUs every GPU's compute stream is taken to be rank 0's,
// so only rank 0's is simulated and a tensor is ready everywhere when it is ready on rank 0 (the
// collectives still run over every GPU and link). This keeps a 512-GPU iteration at O(layers +
// collective flows) activities. It is exact for allreduce methods; for p2p it drops one effect,
// the slowdown of the other reducer GPUs' kernels by the reductions they run.
// Spatial parallelism: a layer's pass that needs its neighbours' halo runs its interior kernel
// while the halo copies travel over the machine's links from the neighbours' GPUs, then its
// border once they are in; under symmetry rank 0 stands for the group's member that receives the
// most, so the simulated stream is the slowest of the group's.
// Iterations are simulated back to back; the steady-state iteration time is the mean spacing of
// the ends of iterations 2..N (the first warms the pipeline: it has no previous update to wait
// for). A sampled run (ReplaySetup::samples) draws each iteration's times from the machine's
// variability, so each iteration after the first is one sample of the iteration time. Call
// replay_iterations in a process of its own: SimGrid allows one engine per process
// (experiment.hpp forks one per configuration).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/collectives/protocol.hpp"
#include "sim/collectives/schedule.hpp"
#include "sim/compute/compute_model.hpp"
#include "sim/replay/timeline.hpp"
#include "topologies/src/routing.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/iteration_graph.hpp"
#include "workloads/src/reducer_assignment.hpp"
#include "workloads/src/spatial_partition.hpp"

namespace gpuscale::sim {

inline constexpr int kFullComputeUpToGpus = 16;

// Under symmetry every rank of a lock-step schedule does what rank 0 does, so a replay over
// `ranks` evaluates its depths from their link loads (lock_step.hpp) rather than flow by flow.
inline bool evaluated_from_link_loads(const coll::Schedule& schedule, int ranks) {
  return schedule.lock_step && ranks > kFullComputeUpToGpus;
}

// The host-side mechanisms a replay simulates; each can be switched off (`gpuscale run
// --without engine,host,input`) to show what it costs.
struct Mechanisms {
  bool engine = true;  // engine operations: their own cost, kernel launches, per-op syncs, pools
  bool host = true;    // the Python thread: per-GPU and per-key work, the metric syncs
  bool input = true;   // the input pipeline: decode threads, prefetch, host-to-device copies
  bool setup = true;   // per-run costs before the first iteration (run_setup.hpp)
};
// The names `--without` takes.
const std::vector<std::string>& mechanism_names();
// Mechanisms with the named ones off; throws ConfigError for an unknown name.
Mechanisms mechanisms_without(const std::vector<std::string>& names);

// The input pipeline of one process on the machine's CPU.
struct InputCosts {
  double decode_s_per_image = 0;  // one decode thread, on the machine's CPU
  double sample_bytes = 0;        // one decoded sample as copied to the GPU
  double h2d_bytes_per_s = 1e10;  // host-to-device copy bandwidth of one GPU
};

struct ReplaySetup {
  const topo::Topology* topology = nullptr;
  const topo::Router* router = nullptr;
  std::vector<int> gpus;                     // device indices, in rank order
  std::vector<std::vector<int>> rings;       // channel rings over ranks (nccl_* methods)
  std::vector<int> node_of_rank;
  const wl::Workload* workload = nullptr;
  const wl::WorkloadCosts* costs = nullptr;
  const compute::ComputeTimeModel* compute = nullptr;
  const wl::FrameworkConfig* framework = nullptr;
  Mechanisms mechanisms;
  InputCosts input;
  int batch = 32;                            // per GPU
  std::string comm = "p2p";                  // a collective algorithm name (registry.hpp)
  wl::ReducerPolicy reducers = wl::ReducerPolicy::Greedy;
  wl::AllreduceModel allreduce;              // how allreduce methods group gradients
  std::string protocol = "auto";             // NCCL protocol: auto, ll, ll128, simple, ideal
  // Spatial parallelism (workloads/src/spatial_partition.hpp): each group of spatial.ways()
  // consecutive ranks splits its samples, `workload` is one GPU's shard, and
  // spatial_exchanges[m][layer] is what the group's member m receives. No split: data
  // parallelism alone.
  wl::SpatialSplit spatial;
  std::vector<std::vector<wl::SpatialLayer>> spatial_exchanges;
  int iterations = 4;
  // Sampled variability (docs/variability.md): with samples > 0 every iteration draws its
  // factors from the machine's distributions (VariabilityDraws) with `seed`; 0 keeps every time
  // as modelled.
  int samples = 0;
  std::uint64_t seed = 1;
  bool record_timeline = false;              // fill ReplayResult::timeline
};

// Whether `comm` exchanges per key like MXNet's kvstore (no fusion) or allreduces, in `framework`.
bool is_kvstore_method(const wl::FrameworkConfig& framework, const std::string& comm);
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
  double input_wait_s = 0;    // rank 0's GPU, done with a batch, waiting for the next one
  double wu_s = 0;            // from rank 0's last backward kernel to its last new weights
  // The rest of the iteration, so that iteration_s = fpbp_s + wu_s + input_wait_s + rest_s:
  // rank 0's GPU idle, waiting for the host (launches, engine syncs, the Python thread) or for a
  // slower GPU, less overlap_s, and what warm-up leaves in the mean over a few iterations
  // (iteration_s; the other terms are the last iteration's).
  double rest_s = 0;
  // The part of fpbp_s that ran before the previous iteration's WU ended (a forward running on
  // the first new weights while the last are still on their way): where rest_s is negative.
  double overlap_s = 0;
  double compute_s = 0;       // rank 0's kernels of one iteration, alone (no communication)
  double exposed_comm_s = 0;  // iteration_s - compute_s, at least 0
  // Each iteration after the first: the time from the previous iteration's end to its own (the
  // samples of a sampled run; iteration_s is their mean).
  std::vector<double> iteration_times_s;
  long activities = 0;        // SimGrid activities started
  int simulated_compute_gpus = 0;
  std::vector<LinkLoad> link_loads;  // links that carried gradient bytes
  std::vector<TimelineEvent> timeline;  // if asked for: replay_timeline.hpp
};

// Simulates setup.iterations iterations. Creates the SimGrid engine: once per process.
ReplayResult replay_iterations(const ReplaySetup& setup);

}  // namespace gpuscale::sim
