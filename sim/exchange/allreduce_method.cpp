#include "sim/exchange/allreduce_method.hpp"

#include <fmt/format.h>

#include "sim/collectives/registry.hpp"
#include "sim/exchange/exchange_trace.hpp"

namespace gpuscale::sim {

AllreduceBuild::AllreduceBuild(ReplayGraph& graph, std::string algorithm,
                               bool updates_after_every_exchange)
    : g_(graph),
      algorithm_(std::move(algorithm)),
      after_every_exchange_(updates_after_every_exchange) {}

AllreduceBuild::NodeId AllreduceBuild::allreduce(double bytes, NodeId start) {
  g_.note_gradient_allreduce(start, bytes);
  return g_.append_collective(algorithm_, bytes, 0, start);
}

AllreduceBuild::NodeId AllreduceBuild::flat_buffer_allreduce(double bytes, NodeId start) {
  const double copy_s = g_.reduction_s(2 * bytes);
  std::vector<NodeId> copied_in, copied_out;
  for (int r = 0; r < g_.compute_ranks(); ++r) {
    copied_in.push_back(g_.compute_node(r, copy_s, {start}, [&] {
      return kernel_record("copy into fusion buffer", KernelCategory::copy, "", bytes);
    }));
  }
  const NodeId reduced = allreduce(bytes, g_.join(copied_in));
  for (int r = 0; r < g_.compute_ranks(); ++r) {
    copied_out.push_back(g_.compute_node(r, copy_s, {reduced}, [&] {
      return kernel_record("copy out of fusion buffer", KernelCategory::copy, "", bytes);
    }));
  }
  return g_.join(copied_out);
}

void AllreduceBuild::gradient_ready(int key, const GradientReady& ready, ExchangeIteration& it) {
  NodeId exchanged = g_.join(ready.computed);
  if (g_.ranks() > 1) exchanged = reduce(key, exchanged, ready.handed_over);
  const auto t = static_cast<size_t>(key);
  if (after_every_exchange_) {
    exchanged_.emplace_back(t, exchanged);
    return;
  }
  for (int r = 0; r < g_.compute_ranks(); ++r) {
    it.weights[t][static_cast<size_t>(r)] = g_.update_op(r, t, {exchanged});
  }
  it.updated(t);
}

void AllreduceBuild::end_iteration(ExchangeIteration& it) {
  close_iteration();
  if (exchanged_.empty()) return;
  // The optimizer's step: every weight, once every gradient is exchanged; Horovod's thread waits
  // for that, DDP's issues once backward() has returned and its stream waits, but where dynamic
  // loss scaling reads its overflow flag back before the step, DDP's thread waits too.
  std::vector<NodeId> ends;
  for (const auto& [t, end] : exchanged_) ends.push_back(end);
  const NodeId all_exchanged = g_.join(ends);
  const bool host_waits =
      g_.setup().framework->execution.updates == wl::UpdateTiming::AfterEveryExchangeOnHost ||
      g_.setup().precision->overflow_sync;
  for (const auto& [t, end] : exchanged_) {
    for (int r = 0; r < g_.compute_ranks(); ++r) {
      const auto ri = static_cast<size_t>(r);
      const NodeId step_issued = it.pushed[t][static_cast<size_t>(g_.process_of(r))];
      it.weights[t][ri] =
          host_waits ? g_.update_op(r, t, {all_exchanged})
                     : g_.update_op(r, t, {it.backward_issued[ri], step_issued}, all_exchanged);
    }
    it.updated(t);
  }
  exchanged_.clear();
}

std::vector<coll::Schedule> AllreduceMethod::routed_schedules(ReplayGraph& graph) const {
  std::vector<coll::Schedule> schedules;
  for (const std::string& algorithm : coll::algorithms_run_by(settings().algorithm)) {
    schedules.push_back(coll::build_schedule(algorithm, graph.request_for(1e6, 0)));
  }
  return schedules;
}

// The groups one after another on one stream, each after the backward that readies its last
// gradient; a flat buffer's copies in and out as kernels.
void AllreduceMethod::export_exchange(ExchangeTrace& trace) const {
  std::vector<double> bytes;
  for (const ExchangeTrace::Gradient& g : trace.gradients()) bytes.push_back(trace.bytes_of(g));
  const std::vector<std::vector<int>> groups = static_groups(bytes);
  std::vector<std::vector<int>> exchanged(trace.gradients().size());
  int previous = -1;
  for (size_t k = 0; k < groups.size(); ++k) {
    const std::vector<int>& group = groups[k];
    std::vector<int> deps;
    if (previous >= 0) deps.push_back(previous);
    double total = 0;
    for (int i : group) {
      const ExchangeTrace::Gradient& g = trace.gradients()[static_cast<size_t>(i)];
      deps.insert(deps.end(), g.ready.begin(), g.ready.end());
      total += trace.bytes_of(g);
    }
    const bool flat = flat_buffer(group.size());
    const std::string what = group_name(
        k, group.size(), trace.name_of(trace.gradients()[static_cast<size_t>(group.front())]));
    const double copy_s = trace.copy_s(total);
    if (flat) deps = {trace.kernel(fmt::format("copy into {}", what), copy_s, deps)};
    previous =
        trace.collective(fmt::format("allreduce {}", what), wl::Collective::AllReduce, total, deps);
    if (flat) previous = trace.kernel(fmt::format("copy out of {}", what), copy_s, {previous});
    for (int i : group) exchanged[static_cast<size_t>(i)] = {previous};
  }
  trace.updates(exchanged, updates_after_every_exchange());
}

}  // namespace gpuscale::sim
