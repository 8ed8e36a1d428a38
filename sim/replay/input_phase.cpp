#include "sim/replay/input_phase.hpp"

namespace gpuscale::sim {

InputPhase::InputPhase(ReplayGraph& graph) : g_(graph) {
  const ReplaySetup& s = g_.setup();
  const auto processes = static_cast<size_t>(g_.processes());
  decode_.resize(processes);
  fetched_.resize(processes);
  const int job_processes = g_.process_per_gpu() ? g_.ranks() : 1;
  if (g_.draws().input_varies() && g_.processes() < job_processes) {
    job_decode_.resize(static_cast<size_t>(job_processes));
    job_taken_.resize(job_decode_.size());
  }
  const int gpus_per_process = g_.process_per_gpu() ? 1 : g_.ranks();
  const double images = static_cast<double>(s.batch) * gpus_per_process;
  decode_s_ = images * s.input.decode_s_per_image / s.framework->input.decode_threads;
}

double InputPhase::steady_batch_s() const {
  return g_.setup().mechanisms.input ? decode_s_ : 0;
}

InputPhase::NodeId InputPhase::decode_batch(int k, Thread& decoder,
                                            const std::vector<NodeId>& taken, double factor) {
  const int prefetch = g_.setup().framework->input.prefetch_batches;
  std::vector<NodeId> slot;
  if (k >= prefetch) slot.push_back(taken[static_cast<size_t>(k - prefetch)]);
  return g_.step(decoder, decode_s_ * factor, slot);
}

IssuedWork InputPhase::build(int k, IterationNodes& nodes) {
  const ReplaySetup& s = g_.setup();
  const auto cr = static_cast<size_t>(g_.compute_ranks());
  IssuedWork work{std::vector<NodeId>(cr), std::vector<NodeId>(cr, -1)};
  for (int p = 0; p < g_.processes(); ++p) {
    const auto pi = static_cast<size_t>(p);
    if (s.mechanisms.input) {
      NodeId decoded = -1;
      if (!job_decode_.empty()) {
        const NodeId reached = g_.python(p).tail;
        std::vector<NodeId> batches;
        for (size_t j = 0; j < job_decode_.size(); ++j) {
          const NodeId batch =
              decode_batch(k, job_decode_[j], job_taken_[j], g_.draws().input(static_cast<int>(j)));
          job_taken_[j].push_back(reached >= 0 ? g_.join({batch, reached}) : batch);
          batches.push_back(batch);
        }
        decoded = g_.join(batches);
      } else {
        decoded = decode_batch(k, decode_[pi], fetched_[pi], g_.draws().input(p));
      }
      if (p == 0) nodes.batch_decoded = decoded;
      fetched_[pi].push_back(g_.step(g_.python(p), 0, {decoded}));
    }
    for (int r = 0; r < g_.compute_ranks(); ++r) {
      if (g_.process_of(r) != p) continue;
      const auto ri = static_cast<size_t>(r);
      work.issued[ri] = g_.python_step(p, g_.python_per_gpu_s(), {});
      if (s.mechanisms.input) {
        const double bytes = s.input.sample_bytes * s.batch;
        work.loaded[ri] = g_.engine_op(
            g_.copy_pool(r), g_.engine_factor(r), {work.issued[ri]}, 1, 1,
            [&](NodeId start) { return g_.host_work(bytes / s.input.h2d_bytes_per_s, {start}); });
      }
    }
  }
  return work;
}

}  // namespace gpuscale::sim
