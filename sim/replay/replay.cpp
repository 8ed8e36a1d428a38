#include "sim/replay/replay.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "sim/collectives/registry.hpp"
#include "sim/core/config_reader.hpp"
#include "sim/platform/simgrid_platform.hpp"
#include "sim/replay/dag_executor.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay_timeline.hpp"
#include "sim/replay/schedule_nodes.hpp"
#include "workloads/src/memory_model.hpp"

namespace gpuscale::sim {
namespace sg4 = simgrid::s4u;
namespace {

using NodeId = DagExecutor::NodeId;

// What one iteration's nodes are, for the measurements.
struct IterationNodes {
  std::vector<NodeId> rank0_fpbp;  // rank 0's forward and backward kernels
  std::vector<NodeId> ends;
};

class Replay {
 public:
  explicit Replay(const ReplaySetup& s)
      : s_(s), ranks_(static_cast<int>(s.gpus.size())),
        graph_(wl::build_iteration_graph(*s.workload, *s.costs, ranks_)),
        algorithm_(algorithm_of(s.comm)), kvstore_(is_kvstore_method(s.comm)),
        protocol_(*s.topology, *s.router, s.gpus, s.rings, s.node_of_rank, s.protocol) {
    compute_ranks_ = ranks_ > kFullComputeUpToGpus ? 1 : ranks_;
    if (s.record_timeline) dag_.record_legs();
    const double element = wl::bytes_per_element(s.workload->precision);
    for (const wl::ParamTensor& t : s.costs->tensors) tensor_bytes_.push_back(t.elements * element);
    reducer_ = wl::assign_reducers(tensor_bytes_, ranks_, s.reducers);
    for (size_t l = 0; l < s.workload->layers.size(); ++l) {
      layer_times_.push_back(l == 0 ? compute::LayerTimes{} : s.compute->layer_times(static_cast<int>(l), s.batch));
    }
    for (const wl::ParamTensor& t : s.costs->tensors) update_s_.push_back(s.compute->update_time(t.elements).value);
  }

  ReplayResult run() {
    const auto engine = make_engine();
    platform_ = SimgridPlatform::build(*s_.topology, legs_needed());
    for (int g : s_.gpus) hosts_.push_back(platform_.host(g));
    compiler_.emplace(*s_.topology, *s_.router, platform_, s_.gpus,
                      [this](double bytes) { return s_.compute->reduction_time(bytes).value; });
    if (s_.record_timeline) compiler_->record_ops();
    compile();
    dag_.run();
    ReplayResult result = measure();
    if (s_.record_timeline) {
      result.timeline =
          replay_timeline(*s_.topology, *s_.router, s_.gpus, dag_, *compiler_, kernels_);
    }
    return result;
  }

 private:
  // The legs of every rank pair any schedule of this run uses (schedules' pairs do not depend
  // on the size).
  std::vector<topo::Leg> legs_needed() {
    std::vector<topo::Leg> legs;
    if (ranks_ < 2) return legs;
    std::set<int> roots(reducer_.begin(), reducer_.end());
    if (algorithm_ != "p2p") roots = {0};
    for (int root : roots) {
      for (topo::Leg& leg : schedule_legs(schedule_for(1e6, root), *s_.router, s_.gpus)) {
        legs.push_back(std::move(leg));
      }
    }
    return legs;
  }

  coll::Schedule schedule_for(double bytes, int root) {
    coll::CollectiveRequest request;
    request.bytes = bytes;
    request.ranks = ranks_;
    request.root = root;
    request.rings = s_.rings;
    request.node_of_rank = s_.node_of_rank;
    request.protocol = protocol_.for_bytes(bytes);
    return coll::build_schedule(algorithm_, request);
  }

  // --- Compilation ---------------------------------------------------------------------------
  // `label` (a function: most runs record no timeline) names the kernel in the timeline.
  template <class Label>
  NodeId compute_node(int rank, double seconds, const std::vector<NodeId>& deps, Label label) {
    DagExecutor::Spec spec;
    spec.kind = DagExecutor::Kind::Compute;
    spec.host = hosts_[static_cast<size_t>(rank)];
    spec.seconds = seconds;
    const NodeId id = dag_.add(std::move(spec), deps);
    if (s_.record_timeline) kernels_.push_back({id, rank, label()});
    return id;
  }

  std::string layer_name(const wl::Task& task) const {
    return s_.workload->layers[static_cast<size_t>(task.layer)].name;
  }

  NodeId join(const std::vector<NodeId>& deps) { return dag_.add({}, deps); }

  NodeId append_schedule(const coll::Schedule& schedule, NodeId start) {
    return compiler_->append(dag_, schedule, start);
  }

  void compile() {
    const int n_iter = s_.iterations;
    const size_t n_tensors = tensor_bytes_.size();
    std::vector<std::vector<NodeId>> prev_updates(static_cast<size_t>(compute_ranks_));  // [rank][tensor]
    std::vector<NodeId> stream_tail(static_cast<size_t>(compute_ranks_), -1);
    std::vector<std::vector<int>> tensors_of_layer(s_.workload->layers.size());
    for (size_t t = 0; t < n_tensors; ++t) tensors_of_layer[static_cast<size_t>(s_.costs->tensors[t].layer)].push_back(static_cast<int>(t));

    for (int k = 0; k < n_iter; ++k) {
      IterationNodes it;
      // [rank][layer] -> backward-weights node
      std::vector<std::vector<NodeId>> bw(static_cast<size_t>(compute_ranks_),
                                          std::vector<NodeId>(s_.workload->layers.size(), -1));
      for (int r = 0; r < compute_ranks_; ++r) {
        NodeId& tail = stream_tail[static_cast<size_t>(r)];
        for (const wl::Task& task : graph_.tasks) {
          const compute::LayerTimes& times = layer_times_[static_cast<size_t>(task.layer)];
          std::vector<NodeId> deps;
          if (tail >= 0) deps.push_back(tail);
          switch (task.kind) {
            case wl::TaskKind::Forward:
              if (k > 0) {
                for (int t : tensors_of_layer[static_cast<size_t>(task.layer)]) {
                  deps.push_back(prev_updates[static_cast<size_t>(r)][static_cast<size_t>(t)]);
                }
              }
              tail = compute_node(r, times.forward.value, deps, [&] { return "fwd " + layer_name(task); });
              if (r == 0) it.rank0_fpbp.push_back(tail);
              break;
            case wl::TaskKind::BackwardWeights:
              tail = compute_node(r, times.backward_weights.value, deps,
                                  [&] { return "bwd-weights " + layer_name(task); });
              bw[static_cast<size_t>(r)][static_cast<size_t>(task.layer)] = tail;
              if (r == 0) it.rank0_fpbp.push_back(tail);
              break;
            case wl::TaskKind::BackwardData:
              tail = compute_node(r, times.backward_data.value, deps,
                                  [&] { return "bwd-data " + layer_name(task); });
              if (r == 0) it.rank0_fpbp.push_back(tail);
              break;
            default:
              break;
          }
        }
      }
      // Exchange, then update, per tensor in the order gradients become ready.
      std::vector<std::vector<NodeId>> updates(static_cast<size_t>(compute_ranks_), std::vector<NodeId>(n_tensors, -1));
      for (const wl::Task& task : graph_.tasks) {
        if (task.kind != wl::TaskKind::Update) continue;
        const size_t t = static_cast<size_t>(task.tensor);
        std::vector<NodeId> ready;
        for (int r = 0; r < compute_ranks_; ++r) ready.push_back(bw[static_cast<size_t>(r)][static_cast<size_t>(task.layer)]);
        NodeId exchanged = join(ready);
        if (ranks_ > 1 && kvstore_) {
          exchanged = append_schedule(schedule_for(tensor_bytes_[t], reducer_[t]), exchanged);
        } else if (ranks_ > 1 && s_.fusion_bytes <= 0) {
          // One allreduce per tensor, in ready order on one communication stream.
          if (last_fused_ >= 0) exchanged = join({exchanged, last_fused_});
          exchanged = last_fused_ = append_schedule(schedule_for(tensor_bytes_[t], 0), exchanged);
        } else if (ranks_ > 1) {
          exchanged = fuse(static_cast<int>(t), exchanged);
        }
        for (int r = 0; r < compute_ranks_; ++r) {
          updates[static_cast<size_t>(r)][t] = compute_node(
              r, update_s_[t], {exchanged}, [&] { return "update " + s_.costs->tensors[t].name; });
          it.ends.push_back(updates[static_cast<size_t>(r)][t]);
        }
      }
      prev_updates = std::move(updates);
      for (NodeId tail : stream_tail) it.ends.push_back(tail);
      iterations_.push_back(std::move(it));
    }
    if (!fusion_latches_.empty()) schedule_tick();
  }

  // --- Horovod tensor fusion -----------------------------------------------------------------
  // A latch released when the fused buffer holding tensor `t` has been allreduced; `t` joins the
  // fusion queue once its gradient is `ready`.
  NodeId fuse(int t, NodeId ready) {
    const NodeId latch = dag_.add_latch();
    fusion_latches_.push_back(latch);
    fusion_tensor_.push_back(t);
    const int index = static_cast<int>(fusion_latches_.size()) - 1;
    dag_.on_done(ready, [this, index](double) { fusion_queue_.push_back(index); });
    return latch;
  }

  void schedule_tick() {
    const NodeId tick = dag_.add({DagExecutor::Kind::Delay, nullptr, s_.fusion_cycle_s, {}, 0, 0}, {});
    dag_.on_done(tick, [this](double) { on_tick(); });
  }

  void on_tick() {
    std::vector<int> ready;
    ready.swap(fusion_queue_);
    auto bytes_of = [this](int index) {
      return tensor_bytes_[static_cast<size_t>(fusion_tensor_[static_cast<size_t>(index)])];
    };
    size_t i = 0;
    while (i < ready.size()) {
      double bytes = 0;
      std::vector<int> buffer;
      while (i < ready.size() && (buffer.empty() || bytes + bytes_of(ready[i]) <= s_.fusion_bytes)) {
        bytes += bytes_of(ready[i]);
        buffer.push_back(ready[i++]);
      }
      // Horovod runs the fused allreduces one after another.
      const NodeId start = join(last_fused_ >= 0 ? std::vector<NodeId>{last_fused_} : std::vector<NodeId>{});
      last_fused_ = append_schedule(schedule_for(bytes, 0), start);
      for (int index : buffer) {
        const NodeId latch = fusion_latches_[static_cast<size_t>(index)];
        dag_.on_done(last_fused_, [this, latch](double) { dag_.release(latch); });
      }
      launched_ += static_cast<int>(buffer.size());
    }
    if (launched_ < static_cast<int>(fusion_latches_.size())) schedule_tick();
  }

  // --- Measurements --------------------------------------------------------------------------
  ReplayResult measure() const {
    ReplayResult result;
    const int n = static_cast<int>(iterations_.size());
    auto max_end = [this](const std::vector<NodeId>& ids) {
      double t = 0;
      for (NodeId id : ids) t = std::max(t, dag_.end_time(id));
      return t;
    };
    std::vector<double> ends;
    for (const IterationNodes& it : iterations_) ends.push_back(max_end(it.ends));
    result.iteration_s = n > 1 ? (ends.back() - ends.front()) / (n - 1) : ends.back();
    // The study's split (nvprof on MXNet): FP+BP is the time the GPU computes forward and backward
    // kernels; WU all the rest of an iteration, the gradient exchange and weight updates that
    // backward did not hide, and a forward waiting for its weights.
    for (NodeId id : iterations_.back().rank0_fpbp) result.fpbp_s += dag_.end_time(id) - dag_.start_time(id);
    result.wu_s = std::max(0.0, result.iteration_s - result.fpbp_s);
    for (const compute::LayerTimes& t : layer_times_) {
      result.compute_s += t.forward.value + t.backward_data.value + t.backward_weights.value;
    }
    for (double u : update_s_) result.compute_s += u;
    result.exposed_comm_s = std::max(0.0, result.iteration_s - result.compute_s);
    result.activities = dag_.activities_started();
    result.simulated_compute_gpus = compute_ranks_;
    for (const auto& [key, bytes] : compiler_->link_bytes()) {
      result.link_loads.push_back({key.first, key.second, bytes / n});
    }
    return result;
  }

  const ReplaySetup& s_;
  int ranks_;
  wl::IterationGraph graph_;
  std::string algorithm_;
  bool kvstore_;
  ProtocolChoice protocol_;
  int compute_ranks_ = 1;
  std::vector<double> tensor_bytes_;
  std::vector<int> reducer_;
  std::vector<compute::LayerTimes> layer_times_;
  std::vector<double> update_s_;

  SimgridPlatform platform_;
  std::vector<sg4::Host*> hosts_;
  std::optional<ScheduleCompiler> compiler_;  // once the platform exists
  DagExecutor dag_;
  std::vector<IterationNodes> iterations_;
  std::vector<KernelRecord> kernels_;  // when recording a timeline

  std::vector<NodeId> fusion_latches_;
  std::vector<int> fusion_tensor_;
  std::vector<int> fusion_queue_;
  NodeId last_fused_ = -1;
  int launched_ = 0;
};

}  // namespace

bool is_kvstore_method(const std::string& comm) {
  return wl::exchange_layout_of(comm) != wl::ExchangeLayout::Allreduce;
}

std::vector<std::string> comm_method_names() {
  std::vector<std::string> names;
  for (const std::string& name : coll::algorithm_names()) names.push_back(name == "nccl_ring" ? "nccl" : name);
  return names;
}

std::string algorithm_of(const std::string& comm) {
  const std::vector<std::string> names = comm_method_names();
  if (std::find(names.begin(), names.end(), comm) == names.end()) {
    throw ConfigError({}, unknown_name_message("comm method", comm, names));
  }
  return comm == "nccl" ? "nccl_ring" : comm;
}

ReplayResult replay_iterations(const ReplaySetup& setup) {
  if (setup.gpus.empty() || setup.iterations < 1) throw std::logic_error("replay: no GPUs or iterations");
  return Replay(setup).run();
}

}  // namespace gpuscale::sim
