// The variability factors of each iteration of a sampled replay (docs/variability.md): for every
// simulated rank a factor on its forward and backward kernels and one on its engine threads'
// host work, for every simulated process one on its own threads' work, and for every process of
// the job one on its decode threads' batch, drawn from the machine's distributions
// (topo::MachineVariability) with one seed, in a fixed order. A source that does not vary draws
// nothing: its factors are its constant (1 where the machine gives none).
//
// Symmetry: where the replay simulates one rank for all (replay.hpp, kFullComputeUpToGpus) that
// rank stands for the slowest, so it draws the largest of the job's ranks' factors at once, an
// order statistic (Distribution::draw_max). This is exact when one source varies: every
// synchronisation then waits for the rank with the largest factor. When compute and host work
// both vary, the slowest rank's iteration is at most the sum of the two largest parts, so the
// replay errs slow by at most that, the difference between the largest sum and the sum of the
// largest. The input pipeline is not summed up so: see input().
#pragma once

#include <cstdint>
#include <vector>

#include "topologies/core/distribution.hpp"
#include "topologies/src/topology_config.hpp"

namespace gpuscale::sim {

class VariabilityDraws {
 public:
  // No draws (every factor 1) unless `sampling`. `ranks` and `processes` are the job's;
  // `simulated_ranks` and `simulated_processes` those the replay simulates (all, or 1 of each).
  VariabilityDraws(const topo::MachineVariability& variability, bool sampling, std::uint64_t seed,
                   int ranks, int simulated_ranks, int processes, int simulated_processes);

  // Draws the next iteration's factors.
  void next_iteration();

  double compute(int simulated_rank) const { return compute_[static_cast<size_t>(simulated_rank)]; }
  double engine(int simulated_rank) const { return engine_[static_cast<size_t>(simulated_rank)]; }
  // The process's own threads: its Python thread, MXNet's CPU-priority (NCCL kvstore) thread.
  double process(int simulated_process) const {
    return process_[static_cast<size_t>(simulated_process)];
  }
  // The decode threads of each of the job's processes (all of them, simulated or not): the time
  // to decode and augment a batch. Not an order statistic: a prefetch queue absorbs a slow batch,
  // so the replay runs every process's decode threads (replay.cpp, "every process decodes").
  double input(int process) const { return input_[static_cast<size_t>(process)]; }
  bool input_varies() const { return sampling_ && variability_.input.varies(); }
  // Whether iterations differ: the run samples and some source varies.
  bool any_varies() const {
    return sampling_ && (variability_.compute.varies() || variability_.host.varies() ||
                         variability_.input.varies());
  }

 private:
  void draw(const Distribution& d, long actual, std::vector<double>& factors);

  const topo::MachineVariability& variability_;
  bool sampling_;
  Rng rng_;
  long ranks_, processes_;
  std::vector<double> compute_, engine_, process_, input_;
};

}  // namespace gpuscale::sim
