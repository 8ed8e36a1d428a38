#include "sim/replay/variability_draws.hpp"

#include <algorithm>

namespace gpuscale::sim {

VariabilityDraws::VariabilityDraws(const topo::MachineVariability& variability, bool sampling,
                                   std::uint64_t seed, int ranks, int simulated_ranks,
                                   int processes, int simulated_processes)
    : variability_(variability), sampling_(sampling), rng_(seed), ranks_(ranks),
      processes_(processes), compute_(static_cast<size_t>(simulated_ranks), 1.0),
      engine_(static_cast<size_t>(simulated_ranks), 1.0),
      process_(static_cast<size_t>(simulated_processes), 1.0),
      input_(static_cast<size_t>(processes), 1.0) {}

void VariabilityDraws::next_iteration() {
  if (!sampling_) return;
  draw(variability_.compute, ranks_, compute_);
  draw(variability_.host, ranks_, engine_);
  draw(variability_.host, processes_, process_);
  draw(variability_.input, processes_, input_);
}

void VariabilityDraws::draw(const Distribution& d, long actual, std::vector<double>& factors) {
  if (!d.varies()) {  // a constant factor (1 where none is given), and no draw
    std::fill(factors.begin(), factors.end(), d.exceeded_by(0.5));
    return;
  }
  const bool all_simulated = static_cast<long>(factors.size()) == actual;
  for (double& factor : factors) factor = all_simulated ? d.draw(rng_) : d.draw_max(rng_, actual);
}

}  // namespace gpuscale::sim
