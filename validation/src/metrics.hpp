// The study's metrics computed from gpuscale's predictions of its runs.
//
// A prediction is one simulated configuration (network, method, GPUs, per-GPU batch): the
// steady-state iteration time, its FP+BP and WU parts, and memory per GPU. Everything else
// follows from the setup (the *.yaml interpretations define each metric):
//   iterations(G, B)  = ceil(images / (G x B / s)); images = strong_images, or weak_images_per_gpu
//                       x G; s: the GPUs sharing each sample, B: the samples of each group of s
//                       (a total batch, setup.batch_total: ceil(images / B), each GPU runs B / G)
//   epoch(G, B)       = setup_s + iteration_s x iterations(G, B)
//   speedup(G)        = epoch(1) / epoch(G), the same method and batch (strong scaling);
//                       weak: G x epoch(1) / epoch(G), the throughput ratio
//   overhead_pct      = 100 x (epoch(method) - epoch(relative_to)) / epoch(relative_to)
//   images_per_s      = G x B / s / iteration_s (B / iteration_s for a total batch), all GPUs
//   FP+BP, WU per epoch = the per-iteration fpbp_s, wu_s x iterations (strong scaling)
// Weak scaling needs no simulation of its own: the per-GPU batch, hence the iteration, is the
// same as in strong scaling; only the images per epoch, hence the iterations, change.
#pragma once

#include <compare>
#include <map>
#include <string>
#include <vector>

#include "validation/src/suite.hpp"

namespace gpuscale::validation {

// One run of the study, by the study's names.
struct RunKey {
  std::string network, method;
  int gpus = 1;
  int batch = 1;
  auto operator<=>(const RunKey&) const = default;
};

struct PredictedRun {
  double iteration_s = 0;  // steady state
  double setup_s = 0;      // once per run (sim/replay/run_setup.hpp)
  double fpbp_s = 0;       // per iteration
  double wu_s = 0;         // per iteration
  double memory_pretrain_gb = 0;
  double memory_gpu0_gb = 0;
  double memory_gpux_gb = 0;  // the fullest GPU other than GPU0 (0 on one GPU)
  int spatial_ways = 1;       // the GPUs sharing each sample (one GPU holds whole samples)
};

// The largest per-GPU batch that fits, for a max_batch claim.
struct CapacityKey {
  std::string network, method;
  int gpus = 1;
  double capacity_bytes = 0;
  auto operator<=>(const CapacityKey&) const = default;
};

struct Predictions {
  std::map<RunKey, PredictedRun> runs;
  std::map<CapacityKey, int> largest_batches;
};

enum class MemoryColumn { Pretrain, Gpu0, Gpux };

class Metrics {
 public:
  // `methods`: the study's method names in the suite's order (memory_methods_within compares them).
  Metrics(Setup setup, std::vector<std::string> methods, Predictions predictions);

  const Setup& setup() const { return setup_; }
  const std::vector<std::string>& methods() const { return methods_; }

  double epoch_s(const RunKey& run, sim::Scaling scaling = sim::Scaling::Strong) const;
  double speedup(const RunKey& run, sim::Scaling scaling = sim::Scaling::Strong) const;
  double overhead_pct(const RunKey& run, const std::string& relative_to,
                      sim::Scaling scaling = sim::Scaling::Strong) const;
  double images_per_s(const RunKey& run) const;
  double fpbp_epoch_s(const RunKey& run) const;
  double wu_epoch_s(const RunKey& run) const;
  double memory_gb(MemoryColumn column, const RunKey& run) const;
  int largest_batch(const CapacityKey& key) const;

  // The predicted value of a table's point or bound.
  double predicted(const Table& table, const StudyRun& run) const;

 private:
  const PredictedRun& run(const RunKey& key) const;
  double iterations(const RunKey& run, sim::Scaling scaling) const;
  double samples_per_iteration(const RunKey& run) const;

  Setup setup_;
  std::vector<std::string> methods_;
  Predictions predictions_;
};

}  // namespace gpuscale::validation
