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
  }
  const int gpus_per_process = g_.process_per_gpu() ? 1 : g_.ranks();
  const double images = static_cast<double>(s.batch) * gpus_per_process;
  const wl::InputPipeline& pipeline = s.framework->input;
  const int threads = pipeline.decode_threads * (pipeline.on_gpu ? gpus_per_process : 1);
  decode_s_ = images * s.input.decode_s_per_image / threads;
}

double InputPhase::steady_batch_s() const {
  return g_.setup().mechanisms.input ? decode_s_ : 0;
}

InputPhase::NodeId InputPhase::decode_batch(int k, Thread& decoder,
                                            const std::vector<NodeId>& slot_freed, double factor) {
  const int prefetch = g_.setup().framework->input.prefetch_batches;
  std::vector<NodeId> slot;
  if (k >= prefetch) {
    const NodeId freed = slot_freed[static_cast<size_t>(k - prefetch)];
    if (freed >= 0) slot.push_back(freed);
  }
  return g_.step(decoder, decode_s_ * factor, slot);
}

InputPhase::NodeId InputPhase::decoded_batch(int k, int p, bool taken) {
  const auto pi = static_cast<size_t>(p);
  if (job_decode_.empty()) return decode_batch(k, decode_[pi], fetched_[pi], g_.draws().input(p));
  // A job process takes batch k once it is decoded and the Python thread reaches for it; its
  // decode threads, which decoded batch k before batch k + prefetch, wait for the latter alone.
  if (taken && static_cast<int>(reached_.size()) == k) reached_.push_back(g_.python(p).tail);
  std::vector<NodeId> batches;
  for (size_t j = 0; j < job_decode_.size(); ++j) {
    batches.push_back(
        decode_batch(k, job_decode_[j], reached_, g_.draws().input(static_cast<int>(j))));
  }
  return g_.join(batches);
}

InputPhase::NodeId InputPhase::decode_on_gpu(int r, NodeId decoded) {
  const ReplaySetup& s = g_.setup();
  const NodeId copied =
      g_.host_work(s.input.sample_bytes * s.batch / s.input.h2d_bytes_per_s, {decoded});
  return g_.compute_node(r, s.input.gpu_decode_s, {copied}, [] {
    return kernel_record("decode batch", KernelCategory::input, "input");
  });
}

IssuedWork InputPhase::build(int k, IterationNodes& nodes) {
  const ReplaySetup& s = g_.setup();
  const bool on_gpu = s.framework->input.on_gpu;
  const auto cr = static_cast<size_t>(g_.compute_ranks());
  IssuedWork work{std::vector<NodeId>(cr), std::vector<NodeId>(cr, -1)};
  for (int p = 0; p < g_.processes(); ++p) {
    const auto pi = static_cast<size_t>(p);
    NodeId decoded = -1;
    if (s.mechanisms.input) {
      decoded = decoded_batch(k, p, true);
      if (p == 0) nodes.batch_decoded = decoded;
      fetched_[pi].push_back(g_.step(g_.python(p), 0, {decoded}));
    }
    for (int r = 0; r < g_.compute_ranks(); ++r) {
      if (g_.process_of(r) != p) continue;
      const auto ri = static_cast<size_t>(r);
      work.issued[ri] = g_.python_step(p, g_.python_per_gpu_s(), {});
      if (s.mechanisms.input && on_gpu) {
        work.loaded[ri] = decode_on_gpu(r, decoded);
      } else if (s.mechanisms.input) {
        const double bytes = s.input.sample_bytes * s.batch;
        work.loaded[ri] = g_.engine_op(
            g_.copy_pool(r), g_.engine_factor(r), {work.issued[ri]}, 1, 1,
            [&](NodeId start) { return g_.host_work(bytes / s.input.h2d_bytes_per_s, {start}); });
      }
    }
  }
  // The batches the queue decodes while the last iteration trains: on the GPU their kernels share
  // it with that iteration, as the batches decoded ahead share every earlier one.
  if (s.mechanisms.input && on_gpu && k == s.iterations - 1) {
    for (int ahead = 1; ahead <= s.framework->input.prefetch_batches; ++ahead) {
      for (int p = 0; p < g_.processes(); ++p) {
        const NodeId decoded = decoded_batch(k + ahead, p, false);
        for (int r = 0; r < g_.compute_ranks(); ++r) {
          if (g_.process_of(r) == p) decode_on_gpu(r, decoded);
        }
      }
    }
  }
  return work;
}

}  // namespace gpuscale::sim
