#include "sim/replay/forward_backward.hpp"

#include <fmt/format.h>

#include <tuple>

namespace gpuscale::sim {

ForwardBackward::ForwardBackward(ReplayGraph& graph, const wl::IterationGraph& tasks,
                                 const PassExchange* halo)
    : g_(graph),
      halo_(halo),
      sync_after_op_(graph.setup().framework->execution.sync_after_op),
      reads_loss_before_backward_(graph.setup().framework->execution.training_loop ==
                                  wl::TrainingLoop::PytorchMain),
      stream_tail_(static_cast<size_t>(graph.compute_ranks()), -1) {
  const ReplaySetup& s = g_.setup();
  tensors_of_layer_.resize(s.workload->layers.size());
  for (size_t t = 0; t < s.costs->tensors.size(); ++t) {
    tensors_of_layer_[static_cast<size_t>(s.costs->tensors[t].layer)].push_back(
        static_cast<int>(t));
  }
  for (size_t l = 0; l < s.workload->layers.size(); ++l) {
    layer_times_.push_back(l == 0 ? compute::LayerTimes{}
                                  : s.compute->layer_times(static_cast<int>(l), s.batch));
  }
  form_segments(tasks);
}

void ForwardBackward::form_segments(const wl::IterationGraph& tasks) {
  std::vector<const wl::Task*> kernels;
  for (const wl::Task& task : tasks.tasks) {
    if (task.kind != wl::TaskKind::Exchange && task.kind != wl::TaskKind::Update)
      kernels.push_back(&task);
  }
  const int bulk = g_.setup().framework->execution.bulk_segment_ops;
  const auto has_parameters = [&](int layer) {
    return !tensors_of_layer_[static_cast<size_t>(layer)].empty();
  };
  bool segment_closed = true;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const wl::Task& task = *kernels[i];
    const bool forward = task.kind == wl::TaskKind::Forward;
    if (segment_closed || static_cast<int>(segments_.back().size()) >= bulk ||
        (segments_.back().front()->kind == wl::TaskKind::Forward) != forward ||
        (has_parameters(task.layer) && (forward || kernels[i - 1]->layer != task.layer))) {
      segments_.emplace_back();
    }
    segments_.back().push_back(&task);
    const bool layers_last_task = i + 1 == kernels.size() || kernels[i + 1]->layer != task.layer;
    segment_closed = !forward && has_parameters(task.layer) && layers_last_task;
  }
}

double ForwardBackward::layers_s() const {
  double total = 0;
  for (const compute::LayerTimes& t : layer_times_) {
    total += t.forward.value + t.backward_data.value + t.backward_weights.value;
  }
  return total;
}

PassesDone ForwardBackward::build(int k, const IssuedWork& work,
                                  const std::vector<std::vector<NodeId>>& weights,
                                  IterationNodes& nodes) {
  const auto cr = static_cast<size_t>(g_.compute_ranks());
  const std::vector<std::vector<NodeId>> per_layer(tensors_of_layer_.size(),
                                                   std::vector<NodeId>(cr, -1));
  PassesDone out{per_layer, per_layer, std::vector<NodeId>(cr, -1), std::vector<NodeId>(cr, -1)};
  std::vector<NodeId> loss_read(cr, -1);
  for (int r = 0; r < g_.compute_ranks(); ++r) {
    const auto ri = static_cast<size_t>(r);
    const std::vector<NodeId> updates_issued = g_.take_updates_issued(r);
    NodeId previous = sync_after_op_ || updates_issued.empty() ? -1 : g_.join(updates_issued);
    NodeId done = -1;
    for (const auto& segment : segments_) {
      std::vector<NodeId> ready{work.issued[ri]};
      if (previous >= 0) ready.push_back(previous);
      if (reads_loss_before_backward_ && segment.front()->kind != wl::TaskKind::Forward &&
          loss_read[ri] < 0) {
        // loss.item(): the Python thread waits for the forward before it issues backward.
        loss_read[ri] =
            g_.python_step(g_.process_of(r), g_.metric_sync_s(), {out.forward_done[ri]});
        ready.push_back(loss_read[ri]);
      }
      if (work.loaded[ri] >= 0) ready.push_back(work.loaded[ri]);
      auto weights_read = [&](const wl::Task* task) {
        std::vector<NodeId> read;
        if (task->kind != wl::TaskKind::Forward || k == 0) return read;
        for (int t : tensors_of_layer_[static_cast<size_t>(task->layer)]) {
          read.push_back(weights[static_cast<size_t>(t)][ri]);
        }
        return read;
      };
      if (sync_after_op_) {
        for (const wl::Task* task : segment) {
          for (NodeId w : weights_read(task)) ready.push_back(w);
        }
      }
      NodeId last_launch = -1;
      done = g_.engine_op(g_.compute_pool(r), g_.engine_factor(r), ready, 0, 1, [&](NodeId start) {
        NodeId launched = start;
        for (const wl::Task* task : segment) {
          launched = g_.host_work(g_.launch_s() * g_.engine_factor(r), {launched});
          std::vector<NodeId> deps{launched};
          if (stream_tail_[ri] >= 0) deps.push_back(stream_tail_[ri]);
          if (!sync_after_op_) {
            for (NodeId w : weights_read(task)) deps.push_back(w);
          }
          stream_tail_[ri] = kernel(r, *task, deps, r == 0 ? &nodes.rank0_fpbp : nullptr);
        }
        last_launch = launched;
        return g_.join({launched, stream_tail_[ri]});
      });
      previous = sync_after_op_ ? done : last_launch;
      out.backward_issued[ri] = previous;
      for (const wl::Task* task : segment) {
        if (task->kind != wl::TaskKind::BackwardWeights) continue;
        out.grad_ready[static_cast<size_t>(task->layer)][ri] = done;
        out.grad_issued[static_cast<size_t>(task->layer)][ri] = previous;
      }
      if (segment.front()->kind == wl::TaskKind::Forward) out.forward_done[ri] = done;
    }
    nodes.ends.push_back(done);
  }
  return out;
}

ForwardBackward::NodeId ForwardBackward::kernel(int rank, const wl::Task& task,
                                                const std::vector<NodeId>& deps,
                                                std::vector<NodeId>* gpu_work) {
  const ReplaySetup& s = g_.setup();
  const compute::LayerTimes& times = layer_times_[static_cast<size_t>(task.layer)];
  const auto [pass, seconds, verb] =
      task.kind == wl::TaskKind::Forward
          ? std::tuple{compute::TrainingPass::forward, times.forward.value, "fwd"}
      : task.kind == wl::TaskKind::BackwardWeights
          ? std::tuple{compute::TrainingPass::backward_weights, times.backward_weights.value,
                       "bwd-weights"}
          : std::tuple{compute::TrainingPass::backward_data, times.backward_data.value, "bwd-data"};
  const std::string& layer = s.workload->layers[static_cast<size_t>(task.layer)].name;
  auto run = [&](double part, const std::vector<NodeId>& after) {
    const NodeId id = g_.compute_node(rank, seconds * part * g_.draws().compute(rank), after, [&] {
      return kernel_record(fmt::format("{} {}", verb, layer),
                           pass == compute::TrainingPass::forward ? KernelCategory::forward
                                                                  : KernelCategory::backward,
                           layer, 0, s.compute->pass_plan(task.layer, pass, s.batch).algorithm);
    });
    if (gpu_work != nullptr) gpu_work->push_back(id);
    return id;
  };
  const std::optional<double> interior =
      halo_ ? halo_->interior_fraction(rank, task) : std::nullopt;
  if (!interior) return run(1, deps);
  // The interior while the receives travel, then the border.
  const NodeId start = g_.join(deps);
  std::vector<NodeId> border_after{run(*interior, {start})};
  for (NodeId received : halo_->receive(g_, rank, task, start)) border_after.push_back(received);
  if (*interior >= 1) return g_.join(border_after);
  return run(1 - *interior, border_after);
}

}  // namespace gpuscale::sim
