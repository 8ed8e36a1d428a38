// The study's metrics computed from gpuscale's predictions of its runs.
//
// A prediction is one simulated configuration (network, method, GPUs, per-GPU batch): the
// steady-state iteration time, its FP+BP and WU parts, and memory per GPU. Everything else
// follows from the setup (the *.yaml interpretations define each metric):
//   iterations(G, B)  = ceil(images / (G x B / s)); images = strong_images (or the network's
//                       dataset's samples), or weak_images_per_gpu x G; s: the GPUs sharing
//                       each sample, B: the samples of each group of s (a total batch,
//                       batch_per: total: ceil(images / B), each GPU runs B / G)
//   epoch(G, B)       = setup_s + iteration_s x iterations(G, B)
//   speedup(G)        = epoch(1) / epoch(G), the same method and batch (strong scaling);
//                       weak: G x epoch(1) / epoch(G), the throughput ratio
//   overhead_pct      = 100 x (epoch(method) - epoch(relative_to)) / epoch(relative_to)
//   images_per_s      = G x B / s / iteration_s (B / iteration_s for a total batch), all GPUs
//   FP+BP, WU per epoch = the per-iteration fpbp_s, wu_s x iterations (strong scaling)
//   epoch_min         = epoch / 60
//   gain_pct          = 100 x (epoch on the other machine / epoch - 1), the same run otherwise
//   precision_speedup = epoch(the network's twin in the other precision) / epoch
// Weak scaling needs no simulation of its own: the per-GPU batch, hence the iteration, is the
// same as in strong scaling; only the images per epoch, hence the iterations, change.
#pragma once

#include <compare>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "validation/src/suite.hpp"

namespace gpuscale::validation {

// One run of the study, by the study's names.
struct RunKey {
  RunKey() = default;
  RunKey(std::string network_, std::string method_, int gpus_, int batch_,
         std::string machine_ = "")
      : network(std::move(network_)),
        method(std::move(method_)),
        gpus(gpus_),
        batch(batch_),
        machine(std::move(machine_)) {}

  std::string network, method;
  int gpus = 1;
  int batch = 1;
  std::string machine;  // the study's server; "": the setup's
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
  // The gradient allreduces of each steady iteration, in order (sim::ReplayResult).
  std::vector<std::vector<double>> allreduce_bytes;
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
  std::map<std::string, long> strong_images;  // per epoch, by network
  std::map<CapacityKey, int> largest_batches;
};

enum class MemoryColumn { Pretrain, Gpu0, Gpux };

// A metric needs a run the predictions lack: one a `gpuscale run` did not simulate (a suite's
// own predictions hold every run its tables name, so for them this is our bug).
class MissingPrediction : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class Metrics {
 public:
  Metrics(const Suite& suite, Predictions predictions);

  const Suite& suite() const { return suite_; }
  const Setup& setup() const { return suite_.setup; }
  // The study's method names in the suite's order (memory_methods_within compares them).
  const std::vector<std::string>& methods() const { return methods_; }

  double epoch_s(const RunKey& run, sim::Scaling scaling = sim::Scaling::Strong) const;
  double speedup(const RunKey& run, sim::Scaling scaling = sim::Scaling::Strong) const;
  double overhead_pct(const RunKey& run, const std::string& relative_to,
                      sim::Scaling scaling = sim::Scaling::Strong) const;
  double images_per_s(const RunKey& run) const;
  double fpbp_epoch_s(const RunKey& run) const;
  double wu_epoch_s(const RunKey& run) const;
  double memory_gb(MemoryColumn column, const RunKey& run) const;
  // 100 x (epoch on `other_machine` / epoch - 1): how much faster the run's machine trains.
  double gain_pct(const RunKey& run, const std::string& other_machine,
                  sim::Scaling scaling = sim::Scaling::Strong) const;
  // epoch(the network's twin in the other precision) / epoch.
  double precision_speedup(const RunKey& run, sim::Scaling scaling = sim::Scaling::Strong) const;
  // The capacity of the run's machine's GPUs, in GB.
  double gpu_memory_gb(const std::string& machine) const;
  int largest_batch(const CapacityKey& key) const;
  // The sizes of the run's gradient allreduces, by steady iteration (sim::ReplayResult).
  const std::vector<std::vector<double>>& allreduce_bytes(const RunKey& run) const {
    return this->run(run).allreduce_bytes;
  }

  // The predicted value of a table's point or bound.
  double predicted(const Table& table, const StudyRun& run) const;

 private:
  const PredictedRun& run(const RunKey& key) const;
  double iterations(const RunKey& run, sim::Scaling scaling) const;
  double samples_per_iteration(const RunKey& run) const;

  Suite suite_;
  std::vector<std::string> methods_;
  Predictions predictions_;
};

}  // namespace gpuscale::validation
