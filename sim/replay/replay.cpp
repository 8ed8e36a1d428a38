#include "sim/replay/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "sim/collectives/registry.hpp"
#include "sim/engine/dag_executor.hpp"
#include "sim/engine/schedule_nodes.hpp"
#include "sim/engine/simgrid_platform.hpp"
#include "sim/replay/host_threads.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay_timeline.hpp"
#include "sim/replay/variability_draws.hpp"
#include "topologies/core/config_reader.hpp"
#include "workloads/src/memory_model.hpp"

namespace gpuscale::sim {
namespace {

using NodeId = DagExecutor::NodeId;

// What one iteration's nodes are, for the measurements.
struct IterationNodes {
  std::vector<NodeId> rank0_fpbp;  // rank 0's forward and backward kernels
  std::vector<NodeId> ends;
  NodeId batch_decoded = -1;  // process 0's batch, out of the decode threads
  std::vector<NodeId> rank0_weights;  // each tensor's new weights on rank 0's GPU
};

class Replay {
 public:
  explicit Replay(const ReplaySetup& s)
      : s_(s), ranks_(static_cast<int>(s.gpus.size())),
        graph_(wl::build_iteration_graph(*s.workload, *s.costs, ranks_)),
        algorithm_(algorithm_of(s.comm)), layout_(s.framework->exchange_layout(s.comm)),
        process_per_gpu_(s.framework->process_per_gpu(s.comm)),
        sync_after_op_(s.framework->execution.sync_after_op),
        step_after_exchanges_(layout_ == wl::ExchangeLayout::Allreduce &&
                              s.framework->execution.updates != wl::UpdateTiming::PerKey),
        protocol_(*s.topology, *s.router, s.gpus, s.rings, s.node_of_rank, s.protocol),
        compute_ranks_(ranks_ > kFullComputeUpToGpus ? 1 : ranks_),
        draws_(s.topology->variability(), s.samples > 0, s.seed, ranks_, compute_ranks_,
               process_per_gpu_ ? ranks_ : 1, process_per_gpu_ ? compute_ranks_ : 1) {
    if (ranks_ % s.spatial.ways() != 0 ||
        (s.spatial.splits() && static_cast<int>(s.spatial_exchanges.size()) != s.spatial.ways())) {
      throw std::logic_error("a spatial split needs whole groups of ranks and a plan per member");
    }
    const wl::HostCosts& host = s.framework->host;
    if (s.mechanisms.engine) {
      engine_op_s_ = host.engine_op.value.value;
      launch_s_ = host.kernel_launch.value.value;
      sync_s_ = host.stream_sync.value.value;
    }
    if (s.mechanisms.host) {
      python_per_gpu_s_ = host.python_per_gpu.value.value;
      python_per_key_s_ = host.python_per_key.value.value;
      metric_sync_s_ = host.metric_sync.value.value;
    }
    if (s.record_timeline) dag_.record_legs();
    const double element = wl::bytes_per_element(s.workload->precision);
    for (const wl::ParamTensor& t : s.costs->tensors) tensor_bytes_.push_back(t.elements * element);
    reducer_ = wl::assign_reducers(tensor_bytes_, ranks_, s.reducers);
    for (size_t l = 0; l < s.workload->layers.size(); ++l) {
      layer_times_.push_back(l == 0 ? compute::LayerTimes{} : s.compute->layer_times(static_cast<int>(l), s.batch));
    }
    for (const wl::ParamTensor& t : s.costs->tensors) update_s_.push_back(s.compute->update_time(t.elements).value);
    busiest_member_ = busiest_member();
  }

  ReplayResult run() {
    const auto engine = make_engine();
    const PlatformNeeds needs = platform_needs();
    platform_ = SimgridPlatform::build(*s_.topology, needs.legs, needs.hosts);
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
  // What the platform must hold: the legs of every rank pair any schedule of this run simulates
  // flow by flow (an algorithm's pairs do not depend on the size; one that chooses among others
  // by size names them, coll::algorithms_run_by), and as hosts the GPUs that run kernels or
  // reductions. Schedules evaluated from link loads (evaluated_from_link_loads) need neither.
  struct PlatformNeeds {
    std::vector<topo::Leg> legs;
    std::vector<int> hosts;
  };
  PlatformNeeds platform_needs() {
    PlatformNeeds needs;
    for (int r = 0; r < compute_ranks_; ++r) needs.hosts.push_back(s_.gpus[static_cast<size_t>(r)]);
    auto add = [&](const coll::Schedule& schedule) {
      for (topo::Leg& leg : schedule_legs(schedule, *s_.router, s_.gpus)) {
        needs.legs.push_back(std::move(leg));
      }
      for (int gpu : schedule_hosts(schedule, s_.gpus)) needs.hosts.push_back(gpu);
    };
    if (ranks_ < 2) return needs;
    std::set<int> roots(reducer_.begin(), reducer_.end());
    if (algorithm_ != "p2p") roots = {0};
    for (const std::string& algorithm : coll::algorithms_run_by(algorithm_)) {
      for (int root : roots) {
        const coll::Schedule s = coll::build_schedule(algorithm, request_for(1e6, root));
        if (!evaluated_from_link_loads(s, ranks_)) add(s);
      }
    }
    for (const auto& [from, to] : halo_pairs()) add(copy_schedule(from, to, 1e6));
    return needs;
  }

  // --- Spatial parallelism -------------------------------------------------------------------
  // The group member compute rank `rank` stands for: its own, or under symmetry the one that
  // receives the most.
  int spatial_member(int rank) const {
    return compute_ranks_ == 1 ? busiest_member_ : rank % s_.spatial.ways();
  }
  // The rank of the member at grid offset (d_row, d_col) from `member`, in `member_rank`'s group.
  int spatial_neighbour(int member_rank, int member, int d_row, int d_col) const {
    const int cols = s_.spatial.cols;
    return member_rank - member + (member / cols + d_row) * cols + member % cols + d_col;
  }
  // The rank a compute rank's member is in the job: itself, or under symmetry group 0's member.
  int spatial_rank(int rank) const { return compute_ranks_ == 1 ? busiest_member_ : rank; }

  // Calls `receive(h)` for every halo or group sum member `member` receives in an iteration.
  template <class Receive>
  void for_each_receive(int member, Receive receive) const {
    for (const wl::SpatialLayer& layer : s_.spatial_exchanges[static_cast<size_t>(member)]) {
      for (const wl::SpatialPass* pass : {&layer.forward, &layer.backward_data}) {
        for (const wl::HaloTransfer& h : pass->receives) receive(h);
      }
    }
  }

  // The elements one receive carries at this run's batch.
  double halo_elements(const wl::HaloTransfer& h) const {
    return h.elements_per_sample * s_.batch + h.elements_fixed;
  }

  // Every (sender, receiver) pair of the simulated members' halos and group sums.
  std::set<std::pair<int, int>> halo_pairs() const {
    std::set<std::pair<int, int>> pairs;
    if (!s_.spatial.splits()) return pairs;
    for (int r = 0; r < compute_ranks_; ++r) {
      const int member = spatial_member(r), to = spatial_rank(r);
      for_each_receive(member, [&](const wl::HaloTransfer& h) {
        pairs.emplace(spatial_neighbour(to, member, h.d_row, h.d_col), to);
      });
    }
    return pairs;
  }

  // The member of a group whose halos and sums carry the most elements at this batch.
  int busiest_member() const {
    int busiest = 0;
    double most = -1;
    for (int m = 0; m < static_cast<int>(s_.spatial_exchanges.size()); ++m) {
      double elements = 0;
      for_each_receive(m, [&](const wl::HaloTransfer& h) { elements += halo_elements(h); });
      if (elements > most) {
        most = elements;
        busiest = m;
      }
    }
    return busiest;
  }

  // The exchange algorithm's schedule; a reduce or broadcast alone is NCCL's ring (MXNet's NCCL
  // kvstore calls ncclReduce and ncclBcast).
  coll::Schedule schedule_for(double bytes, int root, coll::Collective kind = coll::Collective::AllReduce) {
    return coll::build_schedule(kind == coll::Collective::AllReduce ? algorithm_ : "nccl_ring",
                                request_for(bytes, root, kind));
  }

  coll::CollectiveRequest request_for(double bytes, int root,
                                      coll::Collective kind = coll::Collective::AllReduce) {
    coll::CollectiveRequest request;
    request.kind = kind;
    request.bytes = bytes;
    request.ranks = ranks_;
    request.root = root;
    request.rings = s_.rings;
    request.node_of_rank = s_.node_of_rank;
    protocol_.fill(request);
    return request;
  }

  // --- Compilation ---------------------------------------------------------------------------
  // `label` (a function returning a KernelRecord's description: most runs record no timeline)
  // names the kernel in the timeline.
  template <class Label>
  NodeId compute_node(int rank, double seconds, const std::vector<NodeId>& deps, Label label) {
    DagExecutor::Spec spec;
    spec.kind = DagExecutor::Kind::Compute;
    spec.host = platform_.host(s_.gpus[static_cast<size_t>(rank)]);
    spec.seconds = seconds;
    const NodeId id = dag_.add(std::move(spec), deps);
    if (s_.record_timeline) {
      KernelRecord record = label();
      record.node = id;
      record.rank = rank;
      kernels_.push_back(std::move(record));
    }
    return id;
  }

  // A kernel that works on one parameter tensor: its update, the sum of its copies, a copy.
  KernelRecord tensor_kernel(const char* verb, KernelCategory category, size_t t,
                             double bytes) const {
    const std::string& tensor = s_.costs->tensors[t].name;
    return kernel_record(fmt::format("{} {}", verb, tensor), category, tensor, bytes);
  }

  std::string layer_name(const wl::Task& task) const {
    return s_.workload->layers[static_cast<size_t>(task.layer)].name;
  }

  NodeId join(const std::vector<NodeId>& deps) { return dag_.add({}, deps); }

  NodeId append_schedule(const coll::Schedule& schedule, NodeId start) {
    if (evaluated_from_link_loads(schedule, ranks_)) {
      return compiler_->append_lock_step(dag_, schedule, start, 0);
    }
    return compiler_->append(dag_, schedule, start);
  }

  // --- Host threads ---------------------------------------------------------------------------
  // A delay on no resource: host work, or a join when `seconds` is 0.
  NodeId host_work(double seconds, const std::vector<NodeId>& deps) {
    if (seconds <= 0) return join(deps);
    return dag_.add({DagExecutor::Kind::Delay, nullptr, seconds, {}, 0, 0}, deps);
  }

  // One thread running its program in order: each step waits for the previous one.
  struct Thread {
    NodeId tail = -1;
  };
  NodeId step(Thread& thread, double seconds, std::vector<NodeId> deps) {
    if (thread.tail >= 0) deps.push_back(thread.tail);
    return thread.tail = host_work(seconds, deps);
  }

  // An engine operation on a pool thread: once `ready` and a thread is free, the engine's own
  // cost and `launches` kernel launches, then `body(issued)` (the GPU work, returning its end),
  // then the stream synchronisation(s) that end every GPU operation of MXNet 1.x. A framework
  // that does not synchronise after each operation (ExecutionModel::sync_after_op) frees the
  // thread once the operation is issued. `issued_out`, if given, receives the node.
  // `host_factor` scales the thread's own work (the iteration's VariabilityDraws).
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

  coll::Schedule copy_schedule(int src, int dst, double bytes) const {
    coll::Schedule s;
    s.algorithm = "copy";
    s.ranks = ranks_;
    s.payload_bytes = bytes;
    s.ops.push_back({coll::Op::Kind::Transfer, src, dst, bytes, 0, 1, {}});
    return s;
  }

  NodeId copy(int src, int dst, double bytes, NodeId start) {
    return append_schedule(copy_schedule(src, dst, bytes), start);
  }

  int compute_rank(int rank) const { return compute_ranks_ == 1 ? 0 : rank; }
  // The iteration's factor on the work of `rank`'s engine threads.
  double engine_factor(int rank) const { return draws_.engine(compute_rank(rank)); }

  // --- Compilation ---------------------------------------------------------------------------
  void compile() {
    const wl::FrameworkConfig& f = *s_.framework;
    const size_t n_tensors = tensor_bytes_.size();
    const size_t n_layers = s_.workload->layers.size();
    const auto cr = static_cast<size_t>(compute_ranks_);
    for (int r = 0; r < compute_ranks_; ++r) {
      compute_pools_.emplace_back(dag_, s_.mechanisms.engine ? f.execution.gpu_compute_workers : 0);
    }
    updates_issued_.assign(cr, {});
    for (int r = 0; r < ranks_; ++r) {
      copy_pools_.emplace_back(dag_, s_.mechanisms.engine ? f.execution.gpu_copy_workers : 0);
    }
    // MXNet's NCCL kvstore ops hold the global GPU allocator mutex: one at a time.
    nccl_ops_.emplace(dag_, s_.mechanisms.engine ? 1 : 0);
    const int processes = process_per_gpu_ ? compute_ranks_ : 1;
    std::vector<Thread> python(static_cast<size_t>(processes));
    std::vector<Thread> decode(static_cast<size_t>(processes));
    std::vector<std::vector<NodeId>> fetched(static_cast<size_t>(processes));  // [process][k]
    // Every process decodes: where one simulated process stands for the job's and their batches
    // take different times, each of the job's processes runs its own decode threads and prefetch
    // queue, and the simulated one starts an iteration once the last of them has its batch, as
    // the iteration's first synchronisation would make it wait. Each process takes its batch
    // when it is decoded and the (shared) Python thread reaches for it, so its queue absorbs a
    // slow batch as a real one does: no order statistic would. It assumes the processes' Python
    // threads reach for their batches together, as they do where each iteration ends in a sync.
    const int job_processes = process_per_gpu_ ? ranks_ : 1;
    const bool every_process_decodes = draws_.input_varies() && processes < job_processes;
    std::vector<Thread> job_decode(every_process_decodes ? static_cast<size_t>(job_processes) : 0);
    std::vector<std::vector<NodeId>> job_taken(job_decode.size());  // [process][k]
    auto process_of = [&](int rank) { return process_per_gpu_ ? rank : 0; };
    const int gpus_per_process = process_per_gpu_ ? 1 : ranks_;
    const bool reads_loss_before_backward = f.execution.training_loop == wl::TrainingLoop::PytorchMain;

    std::vector<std::vector<int>> tensors_of_layer(n_layers);
    for (size_t t = 0; t < n_tensors; ++t) tensors_of_layer[static_cast<size_t>(s_.costs->tensors[t].layer)].push_back(static_cast<int>(t));
    // Forward and backward kernels in bulked segments of at most bulk_segment_ops, each pass on
    // its own. A segment never spans a layer's parameters (MXNet's BulkTrainingOpSegs,
    // src/executor/graph_executor.cc:1365-1420 at 1.1.0): in forward a segment ends where the
    // weights of the next layer with parameters come in (a variable node); in backward the op
    // that writes a weight gradient runs alone, between segments, so that gradient is ready as
    // soon as its op is done.
    std::vector<const wl::Task*> kernels;
    for (const wl::Task& task : graph_.tasks) {
      if (task.kind != wl::TaskKind::Exchange && task.kind != wl::TaskKind::Update) kernels.push_back(&task);
    }
    const auto has_parameters = [&](int layer) { return !tensors_of_layer[static_cast<size_t>(layer)].empty(); };
    std::vector<std::vector<const wl::Task*>> segments;
    bool segment_closed = true;
    for (size_t i = 0; i < kernels.size(); ++i) {
      const wl::Task& task = *kernels[i];
      const bool forward = task.kind == wl::TaskKind::Forward;
      if (segment_closed || static_cast<int>(segments.back().size()) >= f.execution.bulk_segment_ops ||
          (segments.back().front()->kind == wl::TaskKind::Forward) != forward ||
          (has_parameters(task.layer) && (forward || kernels[i - 1]->layer != task.layer))) {
        segments.emplace_back();
      }
      segments.back().push_back(&task);
      const bool layers_last_task = i + 1 == kernels.size() || kernels[i + 1]->layer != task.layer;
      segment_closed = !forward && has_parameters(task.layer) && layers_last_task;
    }

    // [tensor][rank]: the new weights of the previous iteration, on each compute rank's GPU.
    std::vector<std::vector<NodeId>> weights(n_tensors, std::vector<NodeId>(cr, -1));
    std::vector<NodeId> stream_tail(cr, -1);
    // A step of process `p`'s Python thread, at the iteration's factor on that process's work.
    auto python_step = [&](int p, double seconds, std::vector<NodeId> deps) {
      return step(python[static_cast<size_t>(p)], seconds * draws_.process(p), std::move(deps));
    };
    for (int k = 0; k < s_.iterations; ++k) {
      draws_.next_iteration();
      IterationNodes it;
      // The Python thread of each process: the next batch, then forward and backward issued per GPU.
      std::vector<NodeId> issued(cr), loaded(cr, -1);
      for (int p = 0; p < processes; ++p) {
        const auto pi = static_cast<size_t>(p);
        if (s_.mechanisms.input) {
          // The decode threads fill the prefetch queue; a slot frees when its batch is taken.
          const double images = static_cast<double>(s_.batch) * gpus_per_process;
          const double decode_s = images * s_.input.decode_s_per_image / f.input.decode_threads;
          const int prefetch = f.input.prefetch_batches;
          auto decode_batch = [&](Thread& decoder, const std::vector<NodeId>& taken,
                                  double factor) {
            std::vector<NodeId> slot;
            if (k >= prefetch) slot.push_back(taken[static_cast<size_t>(k - prefetch)]);
            return step(decoder, decode_s * factor, slot);
          };
          NodeId decoded = -1;
          if (every_process_decodes) {
            const NodeId reached = python[pi].tail;
            std::vector<NodeId> batches;
            for (size_t j = 0; j < job_decode.size(); ++j) {
              const NodeId batch =
                  decode_batch(job_decode[j], job_taken[j], draws_.input(static_cast<int>(j)));
              job_taken[j].push_back(reached >= 0 ? join({batch, reached}) : batch);
              batches.push_back(batch);
            }
            decoded = join(batches);
          } else {
            decoded = decode_batch(decode[pi], fetched[pi], draws_.input(p));
          }
          if (p == 0) it.batch_decoded = decoded;
          fetched[pi].push_back(step(python[pi], 0, {decoded}));
        }
        for (int r = 0; r < compute_ranks_; ++r) {
          if (process_of(r) != p) continue;
          const auto ri = static_cast<size_t>(r);
          issued[ri] = python_step(p, python_per_gpu_s_, {});
          if (s_.mechanisms.input) {
            const double bytes = s_.input.sample_bytes * s_.batch;
            loaded[ri] = engine_op(copy_pools_[ri], engine_factor(r), {issued[ri]}, 1, 1,
                                   [&](NodeId start) {
                                     return host_work(bytes / s_.input.h2d_bytes_per_s, {start});
                                   });
          }
        }
      }
      // Each GPU's forward and backward, segment by segment.
      std::vector<std::vector<NodeId>> grad_ready(n_layers, std::vector<NodeId>(cr, -1));
      std::vector<NodeId> forward_done(cr, -1), loss_read(cr, -1), backward_issued(cr, -1);
      for (int r = 0; r < compute_ranks_; ++r) {
        const auto ri = static_cast<size_t>(r);
        // MXNet issues a segment once the previous one has synchronised and the weights it reads
        // are updated; a framework that does not synchronise per operation issues it as soon as
        // the previous one is issued, and its kernels wait on the GPU for the weights.
        // Without syncs, program order still holds on the issuing thread: the next forward is
        // issued after the previous iteration's optimizer step.
        NodeId previous = sync_after_op_ || updates_issued_[ri].empty() ? -1 : join(updates_issued_[ri]);
        updates_issued_[ri].clear();
        NodeId done = -1;
        for (const auto& segment : segments) {
          std::vector<NodeId> ready{issued[ri]};
          if (previous >= 0) ready.push_back(previous);
          if (reads_loss_before_backward && segment.front()->kind != wl::TaskKind::Forward &&
              loss_read[ri] < 0) {
            // loss.item(): the Python thread waits for the forward before it issues backward.
            loss_read[ri] = python_step(process_of(r), metric_sync_s_, {forward_done[ri]});
            ready.push_back(loss_read[ri]);
          }
          if (loaded[ri] >= 0) ready.push_back(loaded[ri]);
          auto weights_read = [&](const wl::Task* task) {
            std::vector<NodeId> nodes;
            if (task->kind != wl::TaskKind::Forward || k == 0) return nodes;
            for (int t : tensors_of_layer[static_cast<size_t>(task->layer)]) nodes.push_back(weights[static_cast<size_t>(t)][ri]);
            return nodes;
          };
          if (sync_after_op_) {
            for (const wl::Task* task : segment) {
              for (NodeId w : weights_read(task)) ready.push_back(w);
            }
          }
          NodeId last_launch = -1;
          done = engine_op(compute_pools_[ri], engine_factor(r), ready, 0, 1, [&](NodeId start) {
            NodeId launched = start;
            for (const wl::Task* task : segment) {
              launched = host_work(launch_s_ * engine_factor(r), {launched});
              std::vector<NodeId> deps{launched};
              if (stream_tail[ri] >= 0) deps.push_back(stream_tail[ri]);
              if (!sync_after_op_) {
                for (NodeId w : weights_read(task)) deps.push_back(w);
              }
              stream_tail[ri] = kernel(r, *task, deps, r == 0 ? &it.rank0_fpbp : nullptr);
            }
            last_launch = launched;
            return join({launched, stream_tail[ri]});
          });
          previous = sync_after_op_ ? done : last_launch;
          backward_issued[ri] = previous;
          for (const wl::Task* task : segment) {
            if (task->kind == wl::TaskKind::BackwardWeights) grad_ready[static_cast<size_t>(task->layer)][ri] = done;
          }
          if (segment.front()->kind == wl::TaskKind::Forward) forward_done[ri] = done;
        }
        it.ends.push_back(done);
      }
      // The Python thread's update(): per key, in parameter order (MXNet: push, updater and pull,
      // running ahead of the GPUs; PyTorch: optimizer.step() once backward() has returned, i.e.
      // once its rank's backward is issued).
      std::vector<std::vector<NodeId>> backward_returned(static_cast<size_t>(processes));
      if (reads_loss_before_backward) {
        for (int r = 0; r < compute_ranks_; ++r) {
          backward_returned[static_cast<size_t>(process_of(r))].push_back(backward_issued[static_cast<size_t>(r)]);
        }
      }
      std::vector<std::vector<NodeId>> pushed(n_tensors);  // [tensor][process]
      for (size_t t = 0; t < n_tensors; ++t) {
        for (int p = 0; p < processes; ++p) {
          const auto pi = static_cast<size_t>(p);
          pushed[t].push_back(python_step(p, python_per_key_s_, backward_returned[pi]));
        }
      }
      // Then MXNet's update_metric: a blocking read of each GPU's forward output.
      if (!reads_loss_before_backward) {
        for (int r = 0; r < compute_ranks_; ++r) {
          python_step(process_of(r), metric_sync_s_, {forward_done[static_cast<size_t>(r)]});
        }
      }
      // Exchange and update, key by key in the order gradients become ready (graph_'s Update tasks).
      buckets_closed_ = 0;
      auto updated = [&](size_t t) {
        for (NodeId w : weights[t]) it.ends.push_back(w);
        it.rank0_weights.push_back(weights[t][0]);
      };
      std::vector<std::pair<size_t, NodeId>> exchanged;  // [key, its allreduce's end], see below
      for (const wl::Task& task : graph_.tasks) {
        if (task.kind != wl::TaskKind::Update) continue;
        const auto t = static_cast<size_t>(task.tensor);
        const auto& ready_on = grad_ready[static_cast<size_t>(task.layer)];
        std::vector<NodeId> ready;
        for (int r = 0; r < compute_ranks_; ++r) ready.push_back(join({ready_on[static_cast<size_t>(r)], pushed[t][static_cast<size_t>(process_of(r))]}));
        if (step_after_exchanges_) {
          exchanged.emplace_back(t, allreduce_gradients(static_cast<int>(t), ready));
          continue;
        }
        weights[t] = exchange(static_cast<int>(t), ready);
        updated(t);
      }
      close_bucket();  // the iteration's last, partly filled
      // PyTorch's optimizer.step(): every weight, once every gradient is exchanged; Horovod's
      // thread waits for that, DDP's issues once backward() has returned and its stream waits.
      if (!exchanged.empty()) {
        std::vector<NodeId> ends;
        for (const auto& [t, end] : exchanged) ends.push_back(end);
        const NodeId all_exchanged = join(ends);
        const bool host_waits = f.execution.updates == wl::UpdateTiming::AfterEveryExchangeOnHost;
        for (const auto& [t, end] : exchanged) {
          for (int r = 0; r < compute_ranks_; ++r) {
            const auto ri = static_cast<size_t>(r);
            const NodeId step_issued = pushed[t][static_cast<size_t>(process_of(r))];
            weights[t][ri] = host_waits
                                 ? update_op(r, t, {all_exchanged})
                                 : update_op(r, t, {backward_issued[ri], step_issued}, all_exchanged);
          }
          updated(t);
        }
      }
      iterations_.push_back(std::move(it));
    }
    if (!fusion_latches_.empty() && fusion_on_a_cycle()) schedule_tick();
  }

  // A layer's pass on `rank`'s GPU once `deps` are done: its end. `gpu_work`, if given, receives
  // each kernel node (two where a halo splits the pass into its interior and its border).
  NodeId kernel(int rank, const wl::Task& task, const std::vector<NodeId>& deps,
                std::vector<NodeId>* gpu_work) {
    const compute::LayerTimes& times = layer_times_[static_cast<size_t>(task.layer)];
    const auto [pass, seconds, verb] =
        task.kind == wl::TaskKind::Forward
            ? std::tuple{compute::TrainingPass::forward, times.forward.value, "fwd"}
        : task.kind == wl::TaskKind::BackwardWeights
            ? std::tuple{compute::TrainingPass::backward_weights, times.backward_weights.value, "bwd-weights"}
            : std::tuple{compute::TrainingPass::backward_data, times.backward_data.value, "bwd-data"};
    auto run = [&](double part, const std::vector<NodeId>& after) {
      const NodeId id = compute_node(rank, seconds * part * draws_.compute(rank), after, [&] {
        return kernel_record(
            fmt::format("{} {}", verb, layer_name(task)),
            pass == compute::TrainingPass::forward ? KernelCategory::forward : KernelCategory::backward,
            layer_name(task), 0, s_.compute->pass_plan(task.layer, pass, s_.batch).algorithm);
      });
      if (gpu_work != nullptr) gpu_work->push_back(id);
      return id;
    };
    const wl::SpatialPass* halo = spatial_pass(rank, task);
    if (halo == nullptr) return run(1, deps);
    // The interior while the halo (or the group's sums) travels, then the border.
    const NodeId start = join(deps);
    const NodeId interior = run(halo->interior_fraction, {start});
    std::vector<NodeId> border_after{interior};
    const int member = spatial_member(rank), to = spatial_rank(rank);
    const double element = wl::bytes_per_element(s_.workload->precision);
    for (const wl::HaloTransfer& h : halo->receives) {
      border_after.push_back(copy(spatial_neighbour(to, member, h.d_row, h.d_col), to,
                                  halo_elements(h) * element, start));
    }
    if (halo->interior_fraction >= 1) return join(border_after);
    return run(1 - halo->interior_fraction, border_after);
  }

  // What `rank` receives before it can finish `task`, if anything.
  const wl::SpatialPass* spatial_pass(int rank, const wl::Task& task) const {
    if (!s_.spatial.splits() || task.kind == wl::TaskKind::BackwardWeights) return nullptr;
    const wl::SpatialLayer& layer = s_.spatial_exchanges[static_cast<size_t>(spatial_member(rank))]
                                                        [static_cast<size_t>(task.layer)];
    const wl::SpatialPass& pass = task.kind == wl::TaskKind::Forward ? layer.forward : layer.backward_data;
    return pass.receives.empty() ? nullptr : &pass;
  }

  // An update kernel on `rank`'s GPU as one engine operation, issued once `ready`; on the GPU
  // it also waits for `stream_waits_for` if given. Its issue is noted for the next iteration's
  // forward (updates_issued_).
  NodeId update_op(int rank, size_t t, const std::vector<NodeId>& ready,
                   NodeId stream_waits_for = -1) {
    NodeId issued = -1;
    HostThreadPool& pool = compute_pools_[static_cast<size_t>(compute_rank(rank))];
    const NodeId done = engine_op(pool, engine_factor(rank), ready, 1, 1, [&](NodeId start) {
      std::vector<NodeId> deps{start};
      if (stream_waits_for >= 0) deps.push_back(stream_waits_for);
      return compute_node(rank, update_s_[t], deps,
                          [&] { return tensor_kernel("update", KernelCategory::update, t, tensor_bytes_[t]); });
    }, &issued);
    if (rank < compute_ranks_) updates_issued_[static_cast<size_t>(rank)].push_back(issued);
    return done;
  }

  // The weights copied into a GPU's own executor array (a pull on the reducing GPU).
  NodeId local_copy_op(int rank, size_t t, const std::vector<NodeId>& ready) {
    HostThreadPool& pool = copy_pools_[static_cast<size_t>(rank)];
    return engine_op(pool, engine_factor(rank), ready, 1, 1, [&](NodeId start) {
      return compute_node(rank, s_.compute->reduction_time(2 * tensor_bytes_[t]).value, {start},
                          [&] { return tensor_kernel("copy", KernelCategory::copy, t, tensor_bytes_[t]); });
    });
  }

  // Key `t`'s exchange and update once its gradient is ready on each compute rank (`ready`):
  // when its new weights are on each compute rank's GPU.
  std::vector<NodeId> exchange(int key, const std::vector<NodeId>& ready) {
    const auto t = static_cast<size_t>(key);
    const double bytes = tensor_bytes_[t];
    const auto on = [&](int rank) { return ready[static_cast<size_t>(compute_rank(rank))]; };
    std::vector<NodeId> weights(static_cast<size_t>(compute_ranks_), -1);
    auto deliver = [&](int rank, NodeId node) {
      if (rank < compute_ranks_) weights[static_cast<size_t>(rank)] = node;
    };
    switch (layout_) {
      case wl::ExchangeLayout::KvstoreDevice: {
        // CommDevice: every GPU's gradient copied into the reducer's buffers, the reducer's own
        // too (CommDevice::Reduce copies all n sources, comm.h:521-547 at 1.1.0; one GPU: none),
        // the sum there, the update once there, the weights copied back to every GPU.
        const int root = reducer_[t];
        std::vector<NodeId> gathered{ranks_ > 1 ? local_copy_op(root, t, {on(root)}) : on(root)};
        for (int g = 0; g < ranks_; ++g) {
          if (g == root) continue;
          gathered.push_back(engine_op(copy_pools_[static_cast<size_t>(g)], engine_factor(g),
                                       {on(g)}, 1, 1,
                                       [&](NodeId start) { return copy(g, root, bytes, start); }));
        }
        NodeId merged = gathered.front();
        if (ranks_ > 1) {
          HostThreadPool& pool = compute_pools_[static_cast<size_t>(compute_rank(root))];
          merged = engine_op(pool, engine_factor(root), gathered, 1, 1, [&](NodeId start) {
            return compute_node(root, s_.compute->reduction_time((ranks_ + 1) * bytes).value, {start},
                                [&] { return tensor_kernel("sum", KernelCategory::reduction, t, bytes); });
          });
        }
        const NodeId updated = update_op(root, t, {merged});
        deliver(root, local_copy_op(root, t, {updated}));
        for (int g = 0; g < ranks_; ++g) {
          if (g == root) continue;
          deliver(g, engine_op(copy_pools_[static_cast<size_t>(root)], engine_factor(root),
                               {updated}, 1, 1,
                               [&](NodeId start) { return copy(root, g, bytes, start); }));
        }
        break;
      }
      case wl::ExchangeLayout::KvstoreNccl: {
        // KVStoreNCCL: one CPU-priority op per collective under the allocator mutex, launching a
        // group of G NCCL calls, then CommSync on every GPU in turn; the update on GPU0.
        // One GPU: no NCCL call and no CommSync, only the empty CPU-priority op.
        const int calls = ranks_ > 1 ? ranks_ : 0;
        const double process_factor = draws_.process(0);
        const NodeId reduced = engine_op(*nccl_ops_, process_factor, ready, calls, calls,
                                         [&](NodeId start) {
          return calls > 0 ? append_schedule(schedule_for(bytes, 0, coll::Collective::Reduce), start) : start;
        });
        const NodeId updated = update_op(0, t, {reduced});
        if (ranks_ == 1) {
          deliver(0, local_copy_op(0, t, {updated}));
          break;
        }
        const NodeId broadcast = engine_op(*nccl_ops_, process_factor, {updated}, calls, calls,
                                           [&](NodeId start) {
          return append_schedule(schedule_for(bytes, 0, coll::Collective::Broadcast), start);
        });
        for (int r = 0; r < compute_ranks_; ++r) deliver(r, broadcast);
        break;
      }
      case wl::ExchangeLayout::Allreduce: {
        const NodeId exchanged = allreduce_gradients(key, ready);
        for (int r = 0; r < compute_ranks_; ++r) deliver(r, update_op(r, t, {exchanged}));
        break;
      }
    }
    return weights;
  }

  // Key `key`'s gradient allreduced, alone or grouped, once it is ready on each compute rank:
  // the node that ends when the summed gradient is on every GPU.
  NodeId allreduce_gradients(int key, const std::vector<NodeId>& ready) {
    NodeId exchanged = join(ready);
    if (ranks_ > 1 && s_.allreduce.buffer.value <= 0) {
      // One allreduce per tensor, in ready order on one communication stream.
      if (last_fused_ >= 0) exchanged = join({exchanged, last_fused_});
      const double bytes = tensor_bytes_[static_cast<size_t>(key)];
      exchanged = last_fused_ = append_schedule(schedule_for(bytes, 0), exchanged);
    } else if (ranks_ > 1 && s_.allreduce.grouping == wl::AllreduceGrouping::Buckets) {
      exchanged = add_to_bucket(static_cast<size_t>(key), exchanged);
    } else if (ranks_ > 1) {
      exchanged = fuse(key, exchanged);
    }
    return exchanged;
  }

  // Gradients copied into a flat buffer of `bytes` on every GPU, the allreduce, and the copies back
  // (a device-to-device copy reads and writes each byte), one after another on one stream after
  // `start` and the previous buffer's: when the gradients are back in place.
  NodeId flat_buffer_allreduce(double bytes, NodeId start) {
    const double copy_s = s_.compute->reduction_time(2 * bytes).value;
    std::vector<NodeId> copied_in, copied_out;
    for (int r = 0; r < compute_ranks_; ++r) {
      copied_in.push_back(compute_node(r, copy_s, {start}, [&] {
        return kernel_record("copy into fusion buffer", KernelCategory::copy, "", bytes);
      }));
    }
    const NodeId reduced = append_schedule(schedule_for(bytes, 0), join(copied_in));
    for (int r = 0; r < compute_ranks_; ++r) {
      copied_out.push_back(compute_node(r, copy_s, {reduced}, [&] {
        return kernel_record("copy out of fusion buffer", KernelCategory::copy, "", bytes);
      }));
    }
    return join(copied_out);
  }

  // --- DDP buckets ---------------------------------------------------------------------------
  // Tensor `t` joins the open bucket (gradients arrive in ready order); the bucket closes once it
  // holds its limit, the iteration's first at `first_bucket` bytes. A latch released when the
  // bucket has been allreduced.
  NodeId add_to_bucket(size_t t, NodeId ready) {
    const NodeId latch = dag_.add_latch();
    open_bucket_.latches.push_back(latch);
    open_bucket_.ready.push_back(ready);
    open_bucket_.bytes += tensor_bytes_[t];
    if (open_bucket_.bytes >= s_.allreduce.bucket_limit_bytes(buckets_closed_)) close_bucket();
    return latch;
  }

  // The open bucket's allreduce, once all its gradients are ready and the previous bucket's is
  // done: DDP launches buckets strictly in order (Reducer::mark_bucket_ready, torch/csrc/
  // distributed/c10d/reducer.cpp:514-543 at v1.6.0) on one NCCL stream. Every gradient is copied
  // into its bucket (:319) and back once reduced (the finalize step), bucket of one or not.
  void close_bucket() {
    if (open_bucket_.latches.empty()) return;
    std::vector<NodeId> deps = open_bucket_.ready;
    if (last_fused_ >= 0) deps.push_back(last_fused_);
    last_fused_ = flat_buffer_allreduce(open_bucket_.bytes, join(deps));
    for (NodeId latch : open_bucket_.latches) {
      dag_.on_done(last_fused_, [this, latch](double) { dag_.release(latch); });
    }
    open_bucket_ = {};
    ++buckets_closed_;
  }

  // --- Horovod tensor fusion -----------------------------------------------------------------
  // Horovod's background thread wakes every `cycle` (HOROVOD_CYCLE_TIME); with a cycle of 0 it
  // loops without sleeping, so the gradients that became ready while one fused allreduce ran go
  // out together as soon as it ends, and a gradient ready while nothing runs goes at once.
  bool fusion_on_a_cycle() const { return s_.allreduce.cycle.value > 0; }

  // A latch released when the fused buffer holding tensor `t` has been allreduced; `t` joins the
  // fusion queue once its gradient is `ready`.
  NodeId fuse(int t, NodeId ready) {
    const NodeId latch = dag_.add_latch();
    fusion_latches_.push_back(latch);
    fusion_tensor_.push_back(t);
    const int index = static_cast<int>(fusion_latches_.size()) - 1;
    dag_.on_done(ready, [this, index](double) {
      fusion_queue_.push_back(index);
      if (!fusion_on_a_cycle() && !fusion_busy_) launch_fused();
    });
    return latch;
  }

  void schedule_tick() {
    const NodeId tick = dag_.add({DagExecutor::Kind::Delay, nullptr, s_.allreduce.cycle.value, {}, 0, 0}, {});
    dag_.on_done(tick, [this](double) { on_tick(); });
  }

  void on_tick() {
    launch_fused();
    if (launched_ < static_cast<int>(fusion_latches_.size())) schedule_tick();
  }

  // The queued gradients, in ready order, packed into buffers and allreduced one after another.
  void launch_fused() {
    std::vector<int> ready;
    ready.swap(fusion_queue_);
    auto bytes_of = [this](int index) {
      return tensor_bytes_[static_cast<size_t>(fusion_tensor_[static_cast<size_t>(index)])];
    };
    size_t i = 0;
    while (i < ready.size()) {
      double bytes = 0;
      std::vector<int> buffer;
      while (i < ready.size() && s_.allreduce.joins_fusion_buffer(static_cast<int>(buffer.size()),
                                                                  bytes, bytes_of(ready[i]))) {
        bytes += bytes_of(ready[i]);
        buffer.push_back(ready[i++]);
      }
      // Horovod runs the fused allreduces one after another; a buffer of more than one tensor is
      // copied in and out tensor by tensor (horovod/common/ops/collective_operations.cc:37-67 at
      // v0.19.1), a lone tensor is reduced in place (ops/nccl_operations.cc:109-158).
      const NodeId start = join(last_fused_ >= 0 ? std::vector<NodeId>{last_fused_} : std::vector<NodeId>{});
      last_fused_ = buffer.size() > 1 ? flat_buffer_allreduce(bytes, start)
                                      : append_schedule(schedule_for(bytes, 0), start);
      for (int index : buffer) {
        const NodeId latch = fusion_latches_[static_cast<size_t>(index)];
        dag_.on_done(last_fused_, [this, latch](double) { dag_.release(latch); });
      }
      launched_ += static_cast<int>(buffer.size());
    }
    if (ready.empty() || fusion_on_a_cycle()) return;
    fusion_busy_ = true;
    dag_.on_done(last_fused_, [this](double) {
      fusion_busy_ = false;
      if (!fusion_queue_.empty()) launch_fused();
    });
  }

  // --- Measurements --------------------------------------------------------------------------
  // Where rank 0's GPU is done with an iteration: its last kernel or its last new weights.
  double gpu_done(const IterationNodes& it) const {
    double t = it.rank0_fpbp.empty() ? 0 : dag_.end_time(it.rank0_fpbp.back());
    for (NodeId w : it.rank0_weights) t = std::max(t, dag_.end_time(w));
    return t;
  }

  // Adds iteration k's FP+BP, WU, input wait and overlap, times `weight`, to `result`.
  void add_split(int k, double weight, ReplayResult& result) const {
    const IterationNodes& it = iterations_[static_cast<size_t>(k)];
    for (NodeId id : it.rank0_fpbp) {
      result.fpbp_s += weight * (dag_.end_time(id) - dag_.start_time(id));
    }
    if (!it.rank0_fpbp.empty()) {
      result.wu_s += weight * (gpu_done(it) - dag_.end_time(it.rank0_fpbp.back()));
    }
    if (k == 0) return;
    const double previous_done = gpu_done(iterations_[static_cast<size_t>(k - 1)]);
    if (it.batch_decoded >= 0) {
      result.input_wait_s += weight * std::max(0.0, dag_.end_time(it.batch_decoded) - previous_done);
    }
    for (NodeId id : it.rank0_fpbp) {
      const double before = std::min(dag_.end_time(id), previous_done) - dag_.start_time(id);
      result.overlap_s += weight * std::max(0.0, before);
    }
  }

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
    for (size_t k = 1; k < ends.size(); ++k) {
      result.iteration_times_s.push_back(ends[k] - ends[k - 1]);
    }
    // The study's split (nvprof on MXNet): FP+BP is the time the GPU computes forward and backward
    // kernels; WU the gradient exchange and weight updates from the end of backward to the last
    // new weights on the GPU (what backward did not hide). Rank 0's GPU waiting for its next
    // batch, done with the previous one, is neither: that time is the input pipeline's.
    // A deterministic run splits its last iteration; one whose iterations vary averages the
    // split over its samples, as it does the iteration time, so that the parts add up to it.
    const int first_split = draws_.any_varies() && n > 1 ? 1 : n - 1;
    for (int k = first_split; k < n; ++k) add_split(k, 1.0 / (n - first_split), result);
    result.rest_s = result.iteration_s - result.fpbp_s - result.wu_s - result.input_wait_s;
    for (const compute::LayerTimes& t : layer_times_) {
      result.compute_s += t.forward.value + t.backward_data.value + t.backward_weights.value;
    }
    for (double u : update_s_) result.compute_s += u;
    result.exposed_comm_s = std::max(0.0, result.iteration_s - result.compute_s);
    result.activities = dag_.activities_started();
    result.simulated_compute_gpus = compute_ranks_;
    const std::vector<double>& link_bytes = compiler_->link_bytes();
    for (size_t slot = 0; slot < link_bytes.size(); ++slot) {
      if (link_bytes[slot] <= 0) continue;
      result.link_loads.push_back({static_cast<int>(slot / 2), slot % 2 == 1, link_bytes[slot] / n});
    }
    return result;
  }

  const ReplaySetup& s_;
  int ranks_;
  wl::IterationGraph graph_;
  std::string algorithm_;
  wl::ExchangeLayout layout_;
  bool process_per_gpu_;
  bool sync_after_op_;  // ExecutionModel::sync_after_op
  bool step_after_exchanges_;  // updates wait for every exchange (ExecutionModel::updates)
  // [compute rank]: the issues of the previous iteration's updates on that GPU's thread.
  std::vector<std::vector<NodeId>> updates_issued_;
  ProtocolChoice protocol_;
  // Host costs in force (0 for a mechanism switched off).
  double engine_op_s_ = 0, launch_s_ = 0, sync_s_ = 0;
  double python_per_gpu_s_ = 0, python_per_key_s_ = 0, metric_sync_s_ = 0;
  // Engine worker pools per GPU and MXNet's NCCL mutex; a deque, since pools never move.
  std::deque<HostThreadPool> compute_pools_, copy_pools_;
  std::optional<HostThreadPool> nccl_ops_;
  int compute_ranks_ = 1;
  int busiest_member_ = 0;  // spatial parallelism under symmetry: the member rank 0 stands for
  VariabilityDraws draws_;  // this iteration's factors (all 1 unless the run samples)
  std::vector<double> tensor_bytes_;
  std::vector<int> reducer_;
  std::vector<compute::LayerTimes> layer_times_;
  std::vector<double> update_s_;

  SimgridPlatform platform_;
  std::optional<ScheduleCompiler> compiler_;  // once the platform exists
  DagExecutor dag_;
  std::vector<IterationNodes> iterations_;
  std::vector<KernelRecord> kernels_;  // when recording a timeline

  std::vector<NodeId> fusion_latches_;
  std::vector<int> fusion_tensor_;
  std::vector<int> fusion_queue_;
  NodeId last_fused_ = -1;
  bool fusion_busy_ = false;  // a fused allreduce runs (cycle 0 only)
  struct Bucket {
    std::vector<NodeId> latches, ready;
    double bytes = 0;
  };
  Bucket open_bucket_;
  int buckets_closed_ = 0;  // this iteration's
  int launched_ = 0;
};

}  // namespace

bool is_kvstore_method(const wl::FrameworkConfig& framework, const std::string& comm) {
  return framework.exchange_layout(comm) != wl::ExchangeLayout::Allreduce;
}

const std::vector<std::string>& mechanism_names() {
  static const std::vector<std::string> names{"engine", "host", "input", "setup"};
  return names;
}

Mechanisms mechanisms_without(const std::vector<std::string>& names) {
  Mechanisms m;
  for (const std::string& name : names) {
    if (name == "engine") {
      m.engine = false;
    } else if (name == "host") {
      m.host = false;
    } else if (name == "input") {
      m.input = false;
    } else if (name == "setup") {
      m.setup = false;
    } else {
      throw ConfigError({"--without"}, unknown_name_message("mechanism", name, mechanism_names()));
    }
  }
  return m;
}

std::string algorithm_of(const std::string& comm) {
  const std::vector<std::string> names = coll::comm_method_names();
  if (std::find(names.begin(), names.end(), comm) == names.end()) {
    throw ConfigError({}, unknown_name_message("comm method", comm, names));
  }
  return comm == "nccl" ? "nccl_ring" : comm;
}

ReplayResult replay_iterations(const ReplaySetup& setup) {
  if (setup.gpus.empty() || setup.iterations < 1 || setup.framework == nullptr) {
    throw std::logic_error("replay: no GPUs, iterations or framework");
  }
  return Replay(setup).run();
}

}  // namespace gpuscale::sim
