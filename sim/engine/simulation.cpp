#include "sim/engine/simulation.hpp"

#include <utility>

namespace gpuscale::sim {

void PlatformNeeds::add(const coll::Schedule& schedule, const topo::Router& router,
                        const std::vector<int>& gpus) {
  for (topo::Leg& leg : schedule_legs(schedule, router, gpus)) legs.push_back(std::move(leg));
  for (int gpu : schedule_hosts(schedule, gpus)) hosts.push_back(gpu);
}

ReductionCost reduction_at(double bandwidth_Bps) {
  return [bandwidth_Bps](double bytes) { return bandwidth_Bps > 0 ? bytes / bandwidth_Bps : 0.0; };
}

Simulation::Simulation(const topo::Topology& topology, const topo::Router& router,
                       std::vector<int> gpus, const PlatformNeeds& needs,
                       ReductionCost reduce_seconds)
    : engine_(make_engine()),
      platform_(SimgridPlatform::build(topology, needs.legs, needs.hosts)),
      compiler_(topology, router, platform_, std::move(gpus), std::move(reduce_seconds)) {}

double Simulation::run() {
  dag_.run();
  return simgrid::s4u::Engine::get_clock();
}

}  // namespace gpuscale::sim
