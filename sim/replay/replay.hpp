// The replay: data-parallel training iterations of one workload on some GPUs of one machine,
// simulated on SimGrid, as the framework (workloads/src/framework.hpp) executes them.
//
// The host is part of the simulated machine (docs/replay.md, "The host"): the framework's
// Python thread runs the training loop in program order, engine worker threads run each GPU
// operation, the input pipeline's decode threads fill a prefetch queue (replay_graph.hpp,
// input_phase.hpp). A kernel cannot start before its launch, a gradient is ready when its
// segment has synced (forward_backward.hpp), and the next iteration's forward of a layer waits
// for that layer's new weights. Gradients are exchanged by the run's exchange method
// (ReplaySetup::exchange, replay_exchange.hpp: MXNet's kvstores, Horovod's fusion, DDP's
// buckets, one allreduce per tensor; sim/exchange), whose collectives' schedules
// (sim/collectives) become SimGrid activities over the machine's real links.
// Symmetry: above kFullComputeUpToGpus GPUs every GPU's compute stream is taken to be rank 0's,
// so only rank 0's is simulated and a tensor is ready everywhere when it is ready on rank 0 (the
// collectives still run over every GPU and link). This keeps a 512-GPU iteration at O(layers +
// collective flows) activities. It is exact for allreduce methods; for p2p it drops one effect,
// the slowdown of the other reducer GPUs' kernels by the reductions they run.
// Spatial parallelism: a layer's pass that needs its neighbours' halo runs its interior kernel
// while the halo copies travel over the machine's links from the neighbours' GPUs, then its
// border once they are in (ReplaySetup::halo); under symmetry rank 0 stands for the group's
// member that receives the most, so the simulated stream is the slowest of the group's.
// Iterations are simulated back to back; the steady-state iteration time is the mean spacing of
// the ends of iterations 2..N (the first warms the pipeline: it has no previous update to wait
// for). A sampled run (ReplaySetup::samples) draws each iteration's times from the machine's
// variability, so each iteration after the first is one sample of the iteration time. Call
// replay_iterations in a process of its own: SimGrid allows one engine per process
// (sim/experiment forks one per configuration).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/collectives/schedule.hpp"
#include "sim/compute/compute_model.hpp"
#include "sim/replay/timeline.hpp"
#include "topologies/src/routing.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::sim {

class ReplayExchange;
class PassExchange;

inline constexpr int kFullComputeUpToGpus = 16;
// The ranks whose GPUs a replay over `ranks` simulates computing: all, or under symmetry rank 0.
inline int simulated_compute_ranks(int ranks) { return ranks > kFullComputeUpToGpus ? 1 : ranks; }

// Under symmetry every rank of a lock-step schedule does what rank 0 does, so a replay over
// `ranks` evaluates its depths from their link loads (lock_step.hpp) rather than flow by flow.
inline bool evaluated_from_link_loads(const coll::Schedule& schedule, int ranks) {
  return schedule.lock_step && ranks > kFullComputeUpToGpus;
}

// The mechanisms a replay simulates beyond kernels and transfers; each can be switched off
// (`gpuscale run --without engine,host,input`) to show what it costs.
struct Mechanisms {
  bool engine = true;  // engine operations: their own cost, kernel launches, per-op syncs, pools
  bool host = true;    // the Python thread: per-GPU and per-key work, the metric syncs
  bool input = true;   // the input pipeline: decode threads, prefetch, host-to-device copies
  bool setup = true;   // per-run costs before the first iteration (run_setup.hpp)
  // Horovod's negotiation of ready tensors, every cycle before its allreduces
  // (sim/exchange/horovod_fusion.cpp)
  bool coordination = true;
  // PyTorch's gradient hook hands a gradient over once its kernels are issued (GradientReady);
  // without it, once the GPU has computed it, as the Python thread's push does for MXNet
  bool handover = true;
};
// The names `--without` takes.
const std::vector<std::string>& mechanism_names();
// Mechanisms with the named ones off; throws ConfigError for an unknown name.
Mechanisms mechanisms_without(const std::vector<std::string>& names);

// The input pipeline of one process on the machine's CPU (and, decoding on the GPU, its GPUs).
struct InputCosts {
  double decode_s_per_image = 0;  // one decode thread, on the machine's CPU
  double sample_bytes = 0;        // one sample as copied to the GPU (decoded, or its coefficients)
  double h2d_bytes_per_s = 1e10;  // host-to-device copy bandwidth of one GPU
  double gpu_decode_s = 0;        // decoding on the GPU: one GPU's batch on its decode kernels
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
  // What the framework runs at the workload's precision (FrameworkConfig::precision_of): the
  // dtype of the exchanged gradients and of the weights, and the overflow check before the step.
  const wl::PrecisionRecipe* precision = nullptr;
  Mechanisms mechanisms;
  InputCosts input;
  int batch = 32;                            // per GPU
  // How gradients are exchanged and weights updated (sim/exchange); required.
  const ReplayExchange* exchange = nullptr;
  // What a split sample's passes receive from the other GPUs of its group (sim/exchange's
  // SpatialHalo); null: data parallelism alone, every GPU holds whole samples.
  const PassExchange* halo = nullptr;
  std::string protocol = "auto";             // NCCL protocol: auto, ll, ll128, simple, ideal
  int iterations = 4;
  // Sampled variability (docs/variability.md): with samples > 0 every iteration draws its
  // factors from the machine's distributions (VariabilityDraws) with `seed`; 0 keeps every time
  // as modelled.
  int samples = 0;
  std::uint64_t seed = 1;
  bool record_timeline = false;              // fill ReplayResult::timeline
};

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
  // The gradient allreduces of each iteration after the first (those iteration_s averages), in
  // the order they start: each fused buffer, bucket or tensor (an allreduce method's; none for a
  // kvstore). A fusion cycle's phase drifts from one iteration to the next, and with it how
  // Horovod splits the gradients into buffers.
  std::vector<std::vector<double>> allreduce_bytes;
  std::vector<TimelineEvent> timeline;  // if asked for: replay_timeline.hpp
};

// Simulates setup.iterations iterations. Creates the SimGrid engine: once per process.
ReplayResult replay_iterations(const ReplaySetup& setup);

}  // namespace gpuscale::sim
