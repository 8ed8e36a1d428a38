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
  // The last iteration's allreduces: each waits for gradients of its iteration, whose backward
  // follows the previous iteration's new weights, so it starts after the previous iteration ends.
  const double last_begins = n > 1 ? ends[ends.size() - 2] : 0;
  std::vector<std::pair<double, double>> last;  // [start, bytes]
  for (const GradientAllreduce& a : *in.gradient_allreduces) {
    const double start = dag.end_time(a.start);
    if (start >= last_begins && start <= ends.back()) last.emplace_back(start, a.bytes);
  }
  std::stable_sort(last.begin(), last.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [start, bytes] : last) result.allreduce_bytes.push_back(bytes);
  const std::vector<double>& link_bytes = *in.link_bytes;
  for (size_t slot = 0; slot < link_bytes.size(); ++slot) {
    if (link_bytes[slot] <= 0) continue;
    result.link_loads.push_back({static_cast<int>(slot / 2), slot % 2 == 1, link_bytes[slot] / n});
  }
  return result;
}

}  // namespace gpuscale::sim
