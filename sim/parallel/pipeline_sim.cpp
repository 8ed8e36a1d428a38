#include "sim/parallel/pipeline_sim.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "sim/collectives/registry.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/parallel/one_f_one_b.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/src/rings.hpp"

namespace gpuscale::par {
namespace {

using sim::DagExecutor;
using NodeId = DagExecutor::NodeId;

// `schedule`'s ranks renamed to the job ranks `ranks` (its rank i is job rank ranks[i]), so that
// one compiler over the whole job runs every group's collectives.
coll::Schedule on_job_ranks(coll::Schedule schedule, const std::vector<int>& ranks) {
  for (coll::Op& op : schedule.ops) {
    if (op.kind == coll::Op::Kind::Delay) continue;
    op.src = ranks[static_cast<size_t>(op.src)];
    if (op.kind == coll::Op::Kind::Transfer) op.dst = ranks[static_cast<size_t>(op.dst)];
  }
  return schedule;
}

class PipelineBuilder {
 public:
  explicit PipelineBuilder(const PipelineJob& job) : job_(job) {}

  int rank(int stage, int replica, int tensor) const {
    return tensor + job_.tp * (replica + job_.dp * stage);
  }
  int device(int rank) const { return job_.placement.gpus[static_cast<size_t>(rank)]; }

  // An NCCL collective over the job ranks `ranks`, on job ranks: an allreduce by the algorithm
  // NCCL would choose (nccl_auto), another by NCCL's ring. `rings` over the group's own ranks
  // (empty: one ring in rank order).
  coll::Schedule collective(coll::Collective kind, double bytes, const std::vector<int>& ranks,
                            const std::vector<std::vector<int>>& rings) const {
    std::vector<int> devices, nodes;
    for (int r : ranks) {
      devices.push_back(device(r));
      nodes.push_back(job_.placement.node_of_rank[static_cast<size_t>(r)]);
    }
    sim::ProtocolChoice choice(*job_.machine, *job_.router, devices, rings, nodes, job_.protocol);
    coll::CollectiveRequest request;
    request.kind = kind;
    request.bytes = bytes;
    request.ranks = static_cast<int>(ranks.size());
    request.rings = rings;
    request.node_of_rank = nodes;
    choice.fill(request);
    const char* algorithm = kind == coll::Collective::AllReduce ? "nccl_auto" : "nccl_ring";
    return on_job_ranks(coll::build_schedule(algorithm, request), ranks);
  }

  // The tensor-parallel group of stage 0, replica 0 with NCCL's rings over its node's GPUs.
  coll::Schedule tp_allreduce() const {
    std::vector<int> ranks;
    for (int j = 0; j < job_.tp; ++j) ranks.push_back(rank(0, 0, j));
    std::map<int, int> local;
    for (int j = 0; j < job_.tp; ++j) local[device(ranks[static_cast<size_t>(j)])] = j;
    std::vector<std::vector<int>> rings;
    for (const auto& ring : topo::find_rings(*job_.machine, 32, job_.tp, 1, job_.router).rings) {
      std::vector<int> order;
      for (int d : ring) order.push_back(local.at(d));
      rings.push_back(std::move(order));
    }
    return collective(coll::Collective::AllReduce, job_.tp_allreduce_bytes, ranks, rings);
  }

  // The data-parallel group of `stage`'s tensor rank `tensor`: one GPU of each replica.
  std::vector<int> dp_group(int stage, int tensor) const {
    std::vector<int> ranks;
    for (int r = 0; r < job_.dp; ++r) ranks.push_back(rank(stage, r, tensor));
    return ranks;
  }

  coll::Schedule transfer(int from, int to) const {
    coll::Schedule copy{"copy", 2, job_.activation_bytes, {}};
    coll::Op op;
    op.src = from;
    op.dst = to;
    op.bytes = job_.activation_bytes;
    copy.ops.push_back(op);
    return copy;
  }

 private:
  const PipelineJob& job_;
};

// Bytes each GPU of `ranks` sends, from the link directions leaving it.
double mean_gpu_egress(const topo::Topology& machine, const std::vector<double>& link_bytes,
                       const std::vector<int>& devices) {
  double total = 0;
  for (size_t l = 0; l < machine.links().size(); ++l) {
    const topo::Link& link = machine.links()[l];
    for (int d : devices) {
      if (link.a == d) total += link_bytes[sim::link_slot(static_cast<int>(l), true)];
      if (link.b == d) total += link_bytes[sim::link_slot(static_cast<int>(l), false)];
    }
  }
  return total / static_cast<double>(devices.size());
}

}  // namespace

PipelineResult simulate_pipeline(const PipelineJob& job) {
  const PipelineBuilder b(job);
  const int p = job.pp, m = job.micro_batches;

  // Every schedule the iteration runs, on job ranks, for the platform's legs.
  const coll::Schedule tp = job.tp > 1 ? b.tp_allreduce() : coll::Schedule{};
  std::vector<coll::Schedule> forward_sends, backward_sends;
  for (int k = 0; k + 1 < p; ++k) {
    forward_sends.push_back(b.transfer(b.rank(k, 0, 0), b.rank(k + 1, 0, 0)));
    backward_sends.push_back(b.transfer(b.rank(k + 1, 0, 0), b.rank(k, 0, 0)));
  }
  // Per stage and tensor rank: the exchange's one or two collectives.
  std::vector<std::vector<std::vector<coll::Schedule>>> exchanges(static_cast<size_t>(p));
  for (int k = 0; k < p && job.dp > 1; ++k) {
    const StageWork& w = job.stages[static_cast<size_t>(k)];
    for (int j = 0; j < job.tp; ++j) {
      const std::vector<int> group = b.dp_group(k, j);
      exchanges[static_cast<size_t>(k)].push_back(
          job.zero1
              ? std::vector{b.collective(coll::Collective::ReduceScatter, w.gradient_bytes, group, {}),
                            b.collective(coll::Collective::AllGather, w.parameter_bytes, group, {})}
              : std::vector{b.collective(coll::Collective::AllReduce, w.gradient_bytes, group, {})});
    }
  }
  // Under symmetry (more than sim::kFullComputeUpToGpus replicas) a stage's exchanges, which all
  // start when its last backward ends, are evaluated side by side from their link loads, as the
  // replay evaluates its collectives: per stage its groups' first collectives as one schedule,
  // and with ZeRO-1 their allgathers as another. Else every flow runs.
  const bool from_link_loads =
      job.detail == sim::FlowDetail::AsReplayed && job.dp > sim::kFullComputeUpToGpus &&
      std::all_of(exchanges.begin(), exchanges.end(), [](const auto& stage) {
        return std::all_of(stage.begin(), stage.end(), [](const auto& group) {
          return std::all_of(group.begin(), group.end(),
                             [](const coll::Schedule& s) { return s.lock_step; });
        });
      });
  std::vector<std::vector<coll::Schedule>> stage_exchanges(static_cast<size_t>(p));
  if (from_link_loads) {
    for (size_t k = 0; k < exchanges.size(); ++k) {
      if (exchanges[k].empty()) continue;
      for (size_t c = 0; c < exchanges[k].front().size(); ++c) {
        std::vector<coll::Schedule> at_once;
        for (const auto& group : exchanges[k]) at_once.push_back(group[c]);
        stage_exchanges[k].push_back(coll::side_by_side(std::move(at_once)));
      }
    }
  }
  // Every transfer's legs; as hosts, the GPUs that run kernels even where no transfer reaches
  // them (one GPU, say). Reductions are fused into NCCL's ring kernels: the schedules have none.
  sim::PlatformNeeds needs;
  const auto add_legs = [&](const coll::Schedule& s) {
    for (topo::Leg& leg : sim::schedule_legs(s, *job.router, job.placement.gpus)) {
      needs.legs.push_back(std::move(leg));
    }
  };
  add_legs(tp);
  for (const auto& s : forward_sends) add_legs(s);
  for (const auto& s : backward_sends) add_legs(s);
  if (!from_link_loads) {
    for (const auto& stage : exchanges) {
      for (const auto& group : stage) {
        for (const auto& s : group) add_legs(s);
      }
    }
  }
  for (int k = 0; k < p; ++k) needs.hosts.push_back(b.device(b.rank(k, 0, 0)));
  sim::Simulation sim(*job.machine, *job.router, job.placement.gpus, needs, sim::reduction_at(0));
  DagExecutor& dag = sim.dag();

  PipelineResult result;
  result.stages.resize(static_cast<size_t>(p));
  std::vector<std::pair<NodeId, NodeId>> sends;          // (sending pass's end, transfer's end)
  std::vector<std::vector<std::pair<NodeId, NodeId>>> passes(static_cast<size_t>(p));
  std::vector<NodeId> last_pass(static_cast<size_t>(p)), dp_end(static_cast<size_t>(p)),
      optimizer(static_cast<size_t>(p));
  double t0 = 0;

  // The iteration, once the tensor-parallel allreduce's time is known.
  const auto build_iteration = [&](double now) {
    t0 = now;
    result.tp_allreduce_s = now;
    const NodeId start = dag.add({}, {});
    std::vector<std::vector<PassStep>> order;
    for (int k = 0; k < p; ++k) order.push_back(one_f_one_b(k, p, m));
    // arrived[k][i]: the transfer bringing micro-batch i's activations (forward) or their
    // gradient (backward) to stage k; -1 until added.
    std::vector<std::vector<NodeId>> fwd_in(static_cast<size_t>(p), std::vector<NodeId>(m, -1)),
        bwd_in = fwd_in;
    std::vector<size_t> next(static_cast<size_t>(p), 0);
    std::vector<NodeId> prev(static_cast<size_t>(p), start);
    for (bool progress = true; progress;) {
      progress = false;
      for (int k = 0; k < p; ++k) {
        const auto ks = static_cast<size_t>(k);
        while (next[ks] < order[ks].size()) {
          const PassStep step = order[ks][next[ks]];
          const auto i = static_cast<size_t>(step.micro_batch);
          const bool first_or_last = step.forward ? k == 0 : k == p - 1;
          const NodeId arrival = first_or_last ? -1 : (step.forward ? fwd_in : bwd_in)[ks][i];
          if (!first_or_last && arrival < 0) break;
          const StageWork& w = job.stages[ks];
          std::vector<NodeId> deps{prev[ks]};
          if (arrival >= 0) deps.push_back(arrival);
          DagExecutor::Spec kernels;
          kernels.kind = DagExecutor::Kind::Compute;
          kernels.host = sim.host(b.device(b.rank(k, 0, 0)));
          kernels.seconds = step.forward ? w.forward_s : w.backward_s;
          if (step.forward && step.micro_batch == 0) kernels.seconds += w.weight_cast_s;
          const NodeId compute = dag.add(kernels, deps);
          DagExecutor::Spec allreduces;
          allreduces.seconds =
              result.tp_allreduce_s * (step.forward ? w.forward_allreduces : w.backward_allreduces);
          const NodeId end = dag.add(allreduces, {compute});
          passes[ks].push_back({compute, end});
          if (step.forward && k + 1 < p) {
            fwd_in[ks + 1][i] = sim.append(forward_sends[ks], end);
            sends.push_back({end, fwd_in[ks + 1][i]});
          } else if (!step.forward && k > 0) {
            bwd_in[ks - 1][i] = sim.append(backward_sends[ks - 1], end);
            sends.push_back({end, bwd_in[ks - 1][i]});
          }
          prev[ks] = end;
          ++next[ks];
          progress = true;
        }
      }
    }
    for (int k = 0; k < p; ++k) {
      const auto ks = static_cast<size_t>(k);
      last_pass[ks] = prev[ks];
      DagExecutor::Spec step;
      step.kind = DagExecutor::Kind::Compute;
      step.host = sim.host(b.device(b.rank(k, 0, 0)));
      step.seconds = job.stages[ks].optimizer_s;
      if (exchanges[ks].empty()) {
        dp_end[ks] = prev[ks];
        optimizer[ks] = dag.add(step, {prev[ks]});
        continue;
      }
      if (from_link_loads) {
        const std::vector<coll::Schedule>& at_once = stage_exchanges[ks];
        const NodeId exchanged = sim.append_lock_step(at_once.front(), prev[ks], 0);
        const NodeId stepped = dag.add(step, {exchanged});
        optimizer[ks] = job.zero1 ? sim.append_lock_step(at_once.back(), stepped, 0) : stepped;
        dp_end[ks] = job.zero1 ? optimizer[ks] : exchanged;
        continue;
      }
      for (size_t j = 0; j < exchanges[ks].size(); ++j) {
        const std::vector<coll::Schedule>& group = exchanges[ks][j];
        const NodeId exchanged = sim.append(group.front(), prev[ks]);
        // Tensor rank 0's step is simulated on its GPU; the other ranks' steps (ZeRO-1: between
        // their reduce-scatter and allgather) take as long on theirs.
        DagExecutor::Spec own = step;
        if (j > 0) {
          own.kind = DagExecutor::Kind::Delay;
          own.host = nullptr;
        }
        const NodeId stepped = dag.add(own, {exchanged});
        const NodeId done = job.zero1 ? sim.append(group.back(), stepped) : stepped;
        if (j == 0) {
          dp_end[ks] = job.zero1 ? done : exchanged;
          optimizer[ks] = done;
        }
      }
    }
  };

  if (tp.ops.empty()) {
    build_iteration(0);
  } else {
    const NodeId probe = sim.append(tp, -1);
    result.tp_bytes_per_gpu = [&] {
      std::vector<int> devices;
      for (int j = 0; j < job.tp; ++j) devices.push_back(b.device(b.rank(0, 0, j)));
      return mean_gpu_egress(*job.machine, sim.compiler().link_bytes(), devices);
    }();
    dag.on_done(probe, build_iteration);
  }
  const double end_s = sim.run();

  double bubble_sum = 0;
  for (int k = 0; k < p; ++k) {
    const auto ks = static_cast<size_t>(k);
    StageResult& s = result.stages[ks];
    for (const auto& [compute, end] : passes[ks]) {
      s.busy_s += dag.end_time(end) - dag.start_time(compute);
    }
    s.last_backward_s = dag.end_time(last_pass[ks]) - t0;
    result.pipeline_s = std::max(result.pipeline_s, s.last_backward_s);
    s.dp_s = dag.end_time(dp_end[ks]) - dag.end_time(last_pass[ks]);
    s.end_s = dag.end_time(optimizer[ks]) - t0;
  }
  for (StageResult& s : result.stages) {
    s.bubble = 1 - s.busy_s / result.pipeline_s;
    bubble_sum += s.bubble;
  }
  result.bubble = bubble_sum / p;
  result.iteration_s = end_s - t0;
  for (const auto& [from, arrived] : sends) {
    result.pp_transfer_s += (dag.end_time(arrived) - dag.end_time(from)) / static_cast<double>(sends.size());
  }
  result.activities = dag.activities_started();
  return result;
}

}  // namespace gpuscale::par
