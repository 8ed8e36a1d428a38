#include "validation/src/metrics.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace gpuscale::validation {

Metrics::Metrics(Setup setup, std::vector<std::string> methods, Predictions predictions)
    : setup_(std::move(setup)),
      methods_(std::move(methods)),
      predictions_(std::move(predictions)) {}

const PredictedRun& Metrics::run(const RunKey& key) const {
  const auto it = predictions_.runs.find(key);
  if (it == predictions_.runs.end()) {
    throw std::logic_error(fmt::format("validation: no prediction for {} {} {} GPUs batch {}",
                                       key.network, key.method, key.gpus, key.batch));
  }
  return it->second;
}

double Metrics::iterations(const RunKey& run, sim::Scaling scaling) const {
  const long images =
      scaling == sim::Scaling::Weak ? setup_.weak_images_per_gpu * run.gpus : setup_.strong_images;
  return std::ceil(static_cast<double>(images) / samples_per_iteration(run));
}

double Metrics::samples_per_iteration(const RunKey& key) const {
  if (setup_.batch_total) return key.batch;
  return static_cast<double>(key.gpus) * key.batch / run(key).spatial_ways;
}

double Metrics::epoch_s(const RunKey& key, sim::Scaling scaling) const {
  return run(key).setup_s + run(key).iteration_s * iterations(key, scaling);
}

double Metrics::speedup(const RunKey& key, sim::Scaling scaling) const {
  RunKey one = key;
  one.gpus = 1;
  const double ratio = epoch_s(one, scaling) / epoch_s(key, scaling);
  return scaling == sim::Scaling::Weak ? ratio * key.gpus : ratio;
}

double Metrics::overhead_pct(const RunKey& key, const std::string& relative_to,
                             sim::Scaling scaling) const {
  RunKey reference = key;
  reference.method = relative_to;
  const double base = epoch_s(reference, scaling);
  return 100 * (epoch_s(key, scaling) - base) / base;
}

double Metrics::images_per_s(const RunKey& key) const {
  return samples_per_iteration(key) / run(key).iteration_s;
}

double Metrics::fpbp_epoch_s(const RunKey& key) const {
  return run(key).fpbp_s * iterations(key, sim::Scaling::Strong);
}

double Metrics::wu_epoch_s(const RunKey& key) const {
  return run(key).wu_s * iterations(key, sim::Scaling::Strong);
}

double Metrics::memory_gb(MemoryColumn column, const RunKey& key) const {
  const PredictedRun& r = run(key);
  switch (column) {
    case MemoryColumn::Pretrain:
      return r.memory_pretrain_gb;
    case MemoryColumn::Gpu0:
      return r.memory_gpu0_gb;
    case MemoryColumn::Gpux:
      return r.memory_gpux_gb;
  }
  throw std::logic_error("validation: unknown memory column");
}

int Metrics::largest_batch(const CapacityKey& key) const {
  const auto it = predictions_.largest_batches.find(key);
  if (it == predictions_.largest_batches.end()) {
    throw std::logic_error(
        fmt::format("validation: no largest batch for {} {}", key.network, key.method));
  }
  return it->second;
}

double Metrics::predicted(const Table& table, const StudyRun& run) const {
  const RunKey key{run.network, run.method, run.gpus, run.batch};
  const sim::Scaling scaling = run.scaling;
  switch (table.metric) {
    case Metric::Speedup:
      return speedup(key, scaling);
    case Metric::OverheadPct:
      return overhead_pct(key, table.relative_to, scaling);
    case Metric::ImagesPerS:
      return images_per_s(key);
    case Metric::MemoryPretrainGb:
      return memory_gb(MemoryColumn::Pretrain, key);
    case Metric::MemoryGpu0Gb:
      return memory_gb(MemoryColumn::Gpu0, key);
    case Metric::MemoryGpuxGb:
      return memory_gb(MemoryColumn::Gpux, key);
  }
  throw std::logic_error("validation: unknown metric");
}

}  // namespace gpuscale::validation
