#include "sim/replay/replay_graph.hpp"

#include <fmt/format.h>

#include <utility>

#include "sim/collectives/registry.hpp"

namespace gpuscale::sim {

ReplayGraph::ReplayGraph(const ReplaySetup& s, bool process_per_gpu)
    : s_(s),
      ranks_(static_cast<int>(s.gpus.size())),
      compute_ranks_(simulated_compute_ranks(ranks_)),
      process_per_gpu_(process_per_gpu),
      sync_after_op_(s.framework->execution.sync_after_op),
      protocol_(*s.topology, *s.router, s.gpus, s.rings, s.node_of_rank, s.protocol),
      draws_(s.topology->variability(), s.samples > 0, s.seed, ranks_, compute_ranks_,
             process_per_gpu ? ranks_ : 1, process_per_gpu ? compute_ranks_ : 1),
      python_(static_cast<size_t>(processes())),
      updates_issued_(static_cast<size_t>(compute_ranks_)) {
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
  const double element = s.precision->gradient_bytes;
  for (const wl::ParamTensor& t : s.costs->tensors) {
    tensor_bytes_.push_back(t.elements * element);
    update_s_.push_back(s.compute->update_time(t.elements).value);
  }
}

void ReplayGraph::build_platform(const std::vector<coll::Schedule>& routed,
                                 const std::vector<int>& hosts) {
  PlatformNeeds needs;
  needs.hosts = hosts;
  for (const coll::Schedule& schedule : routed) needs.add(schedule, *s_.router, s_.gpus);
  sim_.emplace(*s_.topology, *s_.router, s_.gpus, needs,
               [this](double bytes) { return reduction_s(bytes); });
  if (s_.record_timeline) {
    dag().record_legs();
    compiler().record_ops();
  }
  const wl::ExecutionModel& execution = s_.framework->execution;
  for (int r = 0; r < compute_ranks_; ++r) {
    compute_pools_.push_back(make_pool(execution.gpu_compute_workers));
  }
  for (int r = 0; r < ranks_; ++r) copy_pools_.push_back(make_pool(execution.gpu_copy_workers));
}

KernelRecord ReplayGraph::tensor_kernel(const char* verb, KernelCategory category, size_t t,
                                        double bytes) const {
  const std::string& tensor = s_.costs->tensors[t].name;
  return kernel_record(fmt::format("{} {}", verb, tensor), category, tensor, bytes);
}

ReplayGraph::NodeId ReplayGraph::host_work(double seconds, const std::vector<NodeId>& deps) {
  if (seconds <= 0) return join(deps);
  return dag().add({DagExecutor::Kind::Delay, nullptr, seconds, {}, 0, 0}, deps);
}

ReplayGraph::NodeId ReplayGraph::step(Thread& thread, double seconds, std::vector<NodeId> deps) {
  if (thread.tail >= 0) deps.push_back(thread.tail);
  return thread.tail = host_work(seconds, deps);
}

ReplayGraph::NodeId ReplayGraph::python_step(int p, double seconds, std::vector<NodeId> deps) {
  return step(python(p), seconds * draws_.process(p), std::move(deps));
}

ReplayGraph::NodeId ReplayGraph::update_op(int rank, size_t t, const std::vector<NodeId>& ready,
                                           NodeId stream_waits_for) {
  NodeId issued = -1;
  HostThreadPool& pool = compute_pool(compute_rank(rank));
  const NodeId done = engine_op(
      pool, engine_factor(rank), ready, 1, 1,
      [&](NodeId start) {
        std::vector<NodeId> deps{start};
        if (stream_waits_for >= 0) deps.push_back(stream_waits_for);
        return compute_node(rank, update_s_[t], deps, [&] {
          return tensor_kernel("update", KernelCategory::update, t, tensor_bytes_[t]);
        });
      },
      &issued);
  if (rank < compute_ranks_) updates_issued_[static_cast<size_t>(rank)].push_back(issued);
  return done;
}

ReplayGraph::NodeId ReplayGraph::local_copy_op(int rank, size_t t,
                                               const std::vector<NodeId>& ready) {
  return engine_op(copy_pool(rank), engine_factor(rank), ready, 1, 1, [&](NodeId start) {
    return compute_node(rank, reduction_s(2 * tensor_bytes_[t]), {start}, [&] {
      return tensor_kernel("copy", KernelCategory::copy, t, tensor_bytes_[t]);
    });
  });
}

std::vector<ReplayGraph::NodeId> ReplayGraph::take_updates_issued(int rank) {
  return std::exchange(updates_issued_[static_cast<size_t>(rank)], {});
}

coll::CollectiveRequest ReplayGraph::request_for(double bytes, int root, coll::Collective kind) {
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

coll::Schedule ReplayGraph::schedule_for(const std::string& algorithm, double bytes, int root,
                                         coll::Collective kind) {
  return coll::build_schedule(algorithm, request_for(bytes, root, kind));
}

ReplayGraph::NodeId ReplayGraph::append_schedule(const coll::Schedule& schedule, NodeId start) {
  if (evaluated_from_link_loads(schedule, ranks_))
    return sim_->append_lock_step(schedule, start, 0);
  return sim_->append(schedule, start);
}

ReplayGraph::NodeId ReplayGraph::append_collective(const std::string& algorithm, double bytes,
                                                   int root, NodeId start,
                                                   coll::Collective kind) {
  const CollectiveKey key{algorithm, bytes, root, kind};
  if (const auto it = lock_step_costs_.find(key); it != lock_step_costs_.end())
    return sim_->append_lock_step(*it->second, start, 0);
  if (const auto it = schedules_.find(key); it != schedules_.end())
    return append_schedule(it->second, start);
  coll::Schedule schedule = schedule_for(algorithm, bytes, root, kind);
  if (evaluated_from_link_loads(schedule, ranks_)) {
    const ScheduleCompiler::LockStepCost& cost = compiler().lock_step_cost(schedule);
    lock_step_costs_.emplace(key, &cost);
    return sim_->append_lock_step(cost, start, 0);
  }
  return append_schedule(schedules_.emplace(key, std::move(schedule)).first->second, start);
}

coll::Schedule ReplayGraph::copy_schedule(int src, int dst, double bytes) const {
  coll::Schedule s;
  s.algorithm = "copy";
  s.ranks = ranks_;
  s.payload_bytes = bytes;
  s.ops.push_back({coll::Op::Kind::Transfer, src, dst, bytes, 0, 1, {}});
  return s;
}

ReplayGraph::NodeId ReplayGraph::copy(int src, int dst, double bytes, NodeId start) {
  return append_schedule(copy_schedule(src, dst, bytes), start);
}

double ReplayGraph::reduction_s(double bytes) const {
  return s_.compute->reduction_time(bytes).value;
}

}  // namespace gpuscale::sim
