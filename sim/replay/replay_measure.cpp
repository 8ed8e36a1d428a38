#include "sim/replay/replay_measure.hpp"

#include <algorithm>
#include <utility>

namespace gpuscale::sim {
namespace {

// Where rank 0's GPU is done with an iteration: its last kernel or its last new weights.
double gpu_done(const DagExecutor& dag, const IterationNodes& it) {
  double t = it.rank0_fpbp.empty() ? 0 : dag.end_time(it.rank0_fpbp.back());
  for (DagExecutor::NodeId w : it.rank0_weights) t = std::max(t, dag.end_time(w));
  return t;
}

// Adds iteration k's FP+BP, WU, input wait and overlap, times `weight`, to `result`.
void add_split(const DagExecutor& dag, const std::vector<IterationNodes>& iterations, int k,
               double weight, ReplayResult& result) {
  const IterationNodes& it = iterations[static_cast<size_t>(k)];
  for (DagExecutor::NodeId id : it.rank0_fpbp) {
    result.fpbp_s += weight * (dag.end_time(id) - dag.start_time(id));
  }
  if (!it.rank0_fpbp.empty()) {
    result.wu_s += weight * (gpu_done(dag, it) - dag.end_time(it.rank0_fpbp.back()));
  }
  if (k == 0) return;
  const double previous_done = gpu_done(dag, iterations[static_cast<size_t>(k - 1)]);
  if (it.batch_decoded >= 0) {
    result.input_wait_s += weight * std::max(0.0, dag.end_time(it.batch_decoded) - previous_done);
  }
  for (DagExecutor::NodeId id : it.rank0_fpbp) {
    const double before = std::min(dag.end_time(id), previous_done) - dag.start_time(id);
    result.overlap_s += weight * std::max(0.0, before);
  }
}

// The allreduces of each iteration after the first (of the only one, where one ran), in the order
// they start. An allreduce waits for gradients of its iteration, whose backward follows the
// previous iteration's new weights, so it starts after the previous iteration's end.
std::vector<std::vector<double>> steady_allreduces(const DagExecutor& dag,
                                                   const std::vector<double>& ends,
                                                   const std::vector<GradientAllreduce>& all) {
  const size_t first = ends.size() > 1 ? 1 : 0;
  std::vector<std::vector<std::pair<double, double>>> by_iteration(ends.size() - first);
  for (const GradientAllreduce& a : all) {
    const double start = dag.end_time(a.start);
    const auto after = std::lower_bound(ends.begin(), ends.end(), start);  // its iteration's end
    const auto k = static_cast<size_t>(after - ends.begin());
    if (k >= first && k < ends.size()) by_iteration[k - first].emplace_back(start, a.bytes);
  }
  std::vector<std::vector<double>> bytes;
  for (auto& iteration : by_iteration) {
    std::stable_sort(iteration.begin(), iteration.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    bytes.emplace_back();
    for (const auto& [start, b] : iteration) bytes.back().push_back(b);
  }
  return bytes;
}

}  // namespace

ReplayResult measure_replay(const ReplayMeasureInputs& in) {
  const DagExecutor& dag = *in.dag;
  const std::vector<IterationNodes>& iterations = *in.iterations;
  ReplayResult result;
  const int n = static_cast<int>(iterations.size());
  std::vector<double> ends;
  for (const IterationNodes& it : iterations) {
    double end = 0;
    for (DagExecutor::NodeId id : it.ends) end = std::max(end, dag.end_time(id));
    ends.push_back(end);
  }
  result.iteration_s = n > 1 ? (ends.back() - ends.front()) / (n - 1) : ends.back();
  // The decode threads run ahead of the GPUs while the first iteration starts up (a prefetch
  // queue of several batches), so a few iterations of an input-bound run come faster than the
  // threads can sustain; in the steady state no run takes batches faster than they are decoded.
  result.iteration_s = std::max(result.iteration_s, in.min_iteration_s);
  for (size_t k = 1; k < ends.size(); ++k) {
    result.iteration_times_s.push_back(ends[k] - ends[k - 1]);
  }
  // The study's split (nvprof on MXNet): FP+BP is the time the GPU computes forward and backward
  // kernels; WU the gradient exchange and weight updates from the end of backward to the last
  // new weights on the GPU (what backward did not hide). Rank 0's GPU waiting for its next
  // batch, done with the previous one, is neither: that time is the input pipeline's.
  // A deterministic run splits its last iteration; one whose iterations vary averages the
  // split over its samples, as it does the iteration time, so that the parts add up to it.
  const int first_split = in.samples_vary && n > 1 ? 1 : n - 1;
  for (int k = first_split; k < n; ++k)
    add_split(dag, iterations, k, 1.0 / (n - first_split), result);
  result.rest_s = result.iteration_s - result.fpbp_s - result.wu_s - result.input_wait_s;
  result.compute_s = in.compute_s;
  result.exposed_comm_s = std::max(0.0, result.iteration_s - result.compute_s);
  result.activities = dag.activities_started();
  result.simulated_compute_gpus = in.compute_ranks;
  result.allreduce_bytes = steady_allreduces(dag, ends, *in.gradient_allreduces);
  const std::vector<double>& link_bytes = *in.link_bytes;
  for (size_t slot = 0; slot < link_bytes.size(); ++slot) {
    if (link_bytes[slot] <= 0) continue;
    result.link_loads.push_back({static_cast<int>(slot / 2), slot % 2 == 1, link_bytes[slot] / n});
  }
  return result;
}

}  // namespace gpuscale::sim
