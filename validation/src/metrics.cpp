#include "validation/src/metrics.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace gpuscale::validation {

namespace {

std::vector<std::string> study_methods(const Suite& suite) {
  std::vector<std::string> names;
  for (const NameMapping& m : suite.methods) names.push_back(m.study);
  return names;
}

}  // namespace

Metrics::Metrics(const Suite& suite, Predictions predictions)
    : suite_(suite), methods_(study_methods(suite)), predictions_(std::move(predictions)) {}

const PredictedRun& Metrics::run(const RunKey& key) const {
  const auto it = predictions_.runs.find(key);
  if (it == predictions_.runs.end()) {
    throw MissingPrediction(fmt::format("validation: no prediction for {} {} {} GPUs batch {}{}",
                                       key.network, key.method, key.gpus, key.batch,
                                       key.machine.empty() ? "" : " on " + key.machine));
  }
  return it->second;
}

double Metrics::iterations(const RunKey& run, sim::Scaling scaling) const {
  const long images = scaling == sim::Scaling::Weak ? setup().weak_images_per_gpu * run.gpus
                                                     : predictions_.strong_images.at(run.network);
  return std::ceil(static_cast<double>(images) / samples_per_iteration(run));
}

double Metrics::samples_per_iteration(const RunKey& key) const {
  if (suite_.batch_total_of(key.network)) return key.batch;
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

double Metrics::gain_pct(const RunKey& key, const std::string& other_machine,
                         sim::Scaling scaling) const {
  RunKey other = key;
  other.machine = other_machine;
  return 100 * (epoch_s(other, scaling) / epoch_s(key, scaling) - 1);
}

double Metrics::precision_speedup(const RunKey& key, sim::Scaling scaling) const {
  RunKey twin = key;
  twin.network = suite_.twin(key.network);
  return epoch_s(twin, scaling) / epoch_s(key, scaling);
}

double Metrics::gpu_memory_gb(const std::string& machine) const {
  return setup().machine(machine).gpu_memory.value / 1e9;
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
  const RunKey key{run.network, run.method, run.gpus, run.batch, run.machine};
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
    case Metric::EpochMin:
      return epoch_s(key, scaling) / 60;
    case Metric::GainPct:
      return gain_pct(key, table.relative_to_machine, scaling);
    case Metric::PrecisionSpeedup:
      return precision_speedup(key, scaling);
  }
  throw std::logic_error("validation: unknown metric");
}

}  // namespace gpuscale::validation
