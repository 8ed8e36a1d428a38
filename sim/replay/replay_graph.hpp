// One replay's graph under construction (replay.hpp), and what every phase of an iteration and
// every exchange method (sim/exchange) builds it with: GPU kernels, host threads and the engine
// operations they run, copies and collective schedules over the machine's links, weight updates.
//
// The host is part of the simulated machine (docs/replay.md, "The host"): each simulated process
// has a Python thread that runs its steps in program order; each GPU has pools of engine worker
// threads (compute and copy, host_threads.hpp) that run an engine operation as its own cost, one
// launch per kernel, the GPU work, then the cudaStreamSynchronize that MXNet 1.x ends every GPU
// operation with (a framework without per-operation syncs frees the thread once it has issued).
// Under symmetry (replay.hpp) only rank 0's GPU computes: `compute_ranks()` is 1 and every rank
// stands for it where a compute rank is asked for.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/collectives/request.hpp"
#include "sim/collectives/schedule.hpp"
#include "sim/engine/dag_executor.hpp"
#include "sim/engine/schedule_nodes.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/replay/host_threads.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay.hpp"
#include "sim/replay/replay_measure.hpp"
#include "sim/replay/replay_timeline.hpp"
#include "sim/replay/variability_draws.hpp"

namespace gpuscale::sim {

class ReplayGraph {
 public:
  using NodeId = DagExecutor::NodeId;

  // `process_per_gpu`: whether each GPU has a training process of its own (the exchange method
  // decides, ReplayExchange::process_per_gpu).
  ReplayGraph(const ReplaySetup& setup, bool process_per_gpu);

  // The run's simulation (the SimGrid engine and platform, the DAG), once the phases and the
  // exchange have said what the platform must hold: the legs of every rank pair a schedule
  // simulates flow by flow, and the GPUs that compute. Nothing is added to the graph before.
  void build_platform(const std::vector<coll::Schedule>& routed, const std::vector<int>& hosts);
  // Runs the graph to its end.
  void run() { sim_->run(); }

  const ReplaySetup& setup() const { return s_; }
  int ranks() const { return ranks_; }
  // The ranks whose GPUs run kernels: all, or under symmetry rank 0 alone.
  int compute_ranks() const { return compute_ranks_; }
  // The compute rank standing for job rank `rank`.
  int compute_rank(int rank) const { return compute_ranks_ == 1 ? 0 : rank; }
  bool process_per_gpu() const { return process_per_gpu_; }
  // The simulated processes (one per compute rank, or one driving every GPU) and `rank`'s.
  int processes() const { return process_per_gpu_ ? compute_ranks_ : 1; }
  int process_of(int rank) const { return process_per_gpu_ ? rank : 0; }

  DagExecutor& dag() { return sim_->dag(); }
  const DagExecutor& dag() const { return sim_->dag(); }
  ScheduleCompiler& compiler() { return sim_->compiler(); }
  const ScheduleCompiler& compiler() const { return sim_->compiler(); }
  VariabilityDraws& draws() { return draws_; }
  const VariabilityDraws& draws() const { return draws_; }
  // The iteration's factor on the work of `rank`'s engine threads.
  double engine_factor(int rank) const { return draws_.engine(compute_rank(rank)); }

  // Each parameter tensor's bytes (its gradient's, its weights'), in parameter order, and its
  // update kernel's seconds.
  const std::vector<double>& tensor_bytes() const { return tensor_bytes_; }
  const std::vector<double>& update_seconds() const { return update_s_; }
  // Host costs in force (0 for a mechanism switched off, ReplaySetup::mechanisms).
  double launch_s() const { return launch_s_; }
  double python_per_gpu_s() const { return python_per_gpu_s_; }
  double python_per_key_s() const { return python_per_key_s_; }
  double metric_sync_s() const { return metric_sync_s_; }

  // --- Nodes ---------------------------------------------------------------------------------
  NodeId join(const std::vector<NodeId>& deps) { return dag().add({}, deps); }
  // A delay on no resource: host work, or a join when `seconds` is 0.
  NodeId host_work(double seconds, const std::vector<NodeId>& deps);

  // A kernel of `seconds` alone on `rank`'s GPU once `deps` are done. `label` (a function
  // returning its KernelRecord: most runs record no timeline) names it in the timeline.
  template <class Label>
  NodeId compute_node(int rank, double seconds, const std::vector<NodeId>& deps, Label label) {
    DagExecutor::Spec spec;
    spec.kind = DagExecutor::Kind::Compute;
    spec.host = sim_->host(s_.gpus[static_cast<size_t>(rank)]);
    spec.seconds = seconds;
    const NodeId id = dag().add(std::move(spec), deps);
    if (s_.record_timeline) {
      KernelRecord record = label();
      record.node = id;
      record.rank = rank;
      kernels_.push_back(std::move(record));
    }
    return id;
  }
  // A kernel that works on parameter tensor `t`: its update, the sum of its copies, a copy.
  KernelRecord tensor_kernel(const char* verb, KernelCategory category, size_t t,
                             double bytes) const;

  // --- Host threads --------------------------------------------------------------------------
  // One thread running its program in order: each step waits for the previous one.
  struct Thread {
    NodeId tail = -1;
  };
  NodeId step(Thread& thread, double seconds, std::vector<NodeId> deps);
  // A step of simulated process `p`'s Python thread, at the iteration's factor on its work.
  NodeId python_step(int p, double seconds, std::vector<NodeId> deps);
  Thread& python(int p) { return python_[static_cast<size_t>(p)]; }

  // An engine operation on a pool thread: once `ready` and a thread is free, the engine's own
  // cost and `launches` kernel launches, then `body(issued)` (the GPU work, returning its end),
  // then `syncs` stream synchronisations. A framework that does not synchronise after each
  // operation (ExecutionModel::sync_after_op) frees the thread once the operation is issued.
  // `issued_out`, if given, receives the node. `host_factor` scales the thread's own
  // work (the iteration's VariabilityDraws).
  template <class Body>
  NodeId engine_op(HostThreadPool& pool, double host_factor, const std::vector<NodeId>& ready,
                   int launches, int syncs, Body body, NodeId* issued_out = nullptr) {
    const NodeId granted = pool.acquire(join(ready));
    const NodeId issued = host_work((engine_op_s_ + launches * launch_s_) * host_factor, {granted});
    if (issued_out != nullptr) *issued_out = issued;
    if (!sync_after_op_) {
      pool.hold_until(issued);
      return body(issued);
    }
    const NodeId done = host_work(syncs * sync_s_ * host_factor, {body(issued)});
    pool.hold_until(done);
    return done;
  }
  // The engine's worker pools of compute rank `rank`'s GPU (kernels) and of job rank `rank`'s
  // GPU (copies).
  HostThreadPool& compute_pool(int rank) { return compute_pools_[static_cast<size_t>(rank)]; }
  HostThreadPool& copy_pool(int rank) { return copy_pools_[static_cast<size_t>(rank)]; }
  // A pool of `threads` threads (0: no waiting) for an exchange method's own serialisation.
  HostThreadPool make_pool(int threads) {
    return HostThreadPool(dag(), s_.mechanisms.engine ? threads : 0);
  }

  // --- Weights -------------------------------------------------------------------------------
  // Tensor `t`'s update on `rank`'s GPU as one engine operation, issued once `ready`; on the GPU
  // it also waits for `stream_waits_for` if given. Its issue is noted for the next iteration's
  // forward (take_updates_issued).
  NodeId update_op(int rank, size_t t, const std::vector<NodeId>& ready,
                   NodeId stream_waits_for = -1);
  // Tensor `t`'s weights copied into a GPU's own executor array (a pull on the reducing GPU).
  NodeId local_copy_op(int rank, size_t t, const std::vector<NodeId>& ready);
  // The issues of compute rank `rank`'s updates since the last call.
  std::vector<NodeId> take_updates_issued(int rank);

  // --- Transfers -----------------------------------------------------------------------------
  // The request for a collective of `bytes` rooted at `root` over the run's ranks, with the
  // machine's rings, nodes and NCCL protocol (protocol_choice.hpp).
  coll::CollectiveRequest request_for(double bytes, int root,
                                      coll::Collective kind = coll::Collective::AllReduce);
  // Its schedule by `algorithm`.
  coll::Schedule schedule_for(const std::string& algorithm, double bytes, int root,
                              coll::Collective kind = coll::Collective::AllReduce);
  // `schedule`'s nodes after `start`, evaluated from link loads under symmetry (replay.hpp).
  NodeId append_schedule(const coll::Schedule& schedule, NodeId start);
  // The nodes of `algorithm`'s collective of `bytes` rooted at `root`, after `start`. Its
  // schedule is built once per run, since every iteration (and every sample) repeats the same
  // collectives; where it is evaluated from link loads, the run keeps its cost instead: a tree
  // over 16,384 GPUs is half a million ops, and a replay has one per gradient bucket size.
  NodeId append_collective(const std::string& algorithm, double bytes, int root, NodeId start,
                           coll::Collective kind = coll::Collective::AllReduce);
  // One copy of `bytes` from rank `src`'s GPU to rank `dst`'s along the machine's route.
  coll::Schedule copy_schedule(int src, int dst, double bytes) const;
  NodeId copy(int src, int dst, double bytes, NodeId start);
  // A gradient allreduce of `bytes` starting once `start` is done: what the run reports of the
  // messages its exchange sent (ReplayResult::allreduce_bytes).
  void note_gradient_allreduce(NodeId start, double bytes) {
    gradient_allreduces_.push_back({start, bytes});
  }
  const std::vector<GradientAllreduce>& gradient_allreduces() const { return gradient_allreduces_; }
  // The GPU time of a reduction or device-to-device copy moving `bytes` (reads and writes).
  double reduction_s(double bytes) const;

  // The kernels recorded for the timeline (ReplaySetup::record_timeline).
  const std::vector<KernelRecord>& kernels() const { return kernels_; }

 private:
  const ReplaySetup& s_;
  int ranks_;
  int compute_ranks_;
  bool process_per_gpu_;
  bool sync_after_op_;
  double engine_op_s_ = 0, launch_s_ = 0, sync_s_ = 0;
  double python_per_gpu_s_ = 0, python_per_key_s_ = 0, metric_sync_s_ = 0;
  std::vector<double> tensor_bytes_;
  std::vector<double> update_s_;
  ProtocolChoice protocol_;
  VariabilityDraws draws_;
  std::optional<Simulation> sim_;  // once the platform's needs are known
  std::vector<Thread> python_;
  std::vector<GradientAllreduce> gradient_allreduces_;
  // Engine worker pools per GPU; a deque, since pools never move.
  std::deque<HostThreadPool> compute_pools_, copy_pools_;
  // [compute rank]: the issues of updates on that GPU's thread since the last take.
  std::vector<std::vector<NodeId>> updates_issued_;
  std::vector<KernelRecord> kernels_;
  using CollectiveKey = std::tuple<std::string, double, int, coll::Collective>;
  std::map<CollectiveKey, coll::Schedule> schedules_;
  std::map<CollectiveKey, const ScheduleCompiler::LockStepCost*> lock_step_costs_;
};

}  // namespace gpuscale::sim
