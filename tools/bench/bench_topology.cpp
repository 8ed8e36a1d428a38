// How long the machine model takes to set up, as the GPU count grows: loading and expanding a
// Lassen-style cluster, routing the ring every collective of a 512-GPU iteration will use, and
// building the SimGrid platform for those routes. Run: build/tools/bench/bench_topology
#include <benchmark/benchmark.h>

#include "sim/engine/simgrid_platform.hpp"
#include "topologies/src/rings.hpp"
#include "topologies/src/topology_loader.hpp"

namespace {

using namespace gpuscale;

std::vector<std::string> nodes_override(const benchmark::State& state) {
  return {"cluster.nodes=" + std::to_string(state.range(0))};
}

void BM_LoadAndExpandLassen(benchmark::State& state) {
  for (auto _ : state) {
    auto t = topo::Topology::build(topo::load_topology_config("lassen", nodes_override(state)));
    benchmark::DoNotOptimize(t.gpus().size());
  }
  state.counters["gpus"] = static_cast<double>(4 * state.range(0));
}
BENCHMARK(BM_LoadAndExpandLassen)->Arg(2)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond);

// The machine of a 16,384-GPU `run` on the SuperPOD (2,048 nodes of 8 H200s, NVSwitches and a
// rail-optimised fat tree): what each configuration's machine costs before anything is routed.
void BM_LoadAndExpandSuperPod(benchmark::State& state) {
  for (auto _ : state) {
    auto t = topo::Topology::build(
        topo::load_topology_config("dgx-h200-superpod", nodes_override(state)));
    benchmark::DoNotOptimize(t.gpus().size());
  }
  state.counters["gpus"] = static_cast<double>(8 * state.range(0));
}
BENCHMARK(BM_LoadAndExpandSuperPod)->Arg(64)->Arg(2048)->Unit(benchmark::kMillisecond);

// The routes of one ring around every GPU, from a fresh router (no cached routes).
void BM_RouteRing(benchmark::State& state) {
  const auto t = topo::Topology::build(topo::load_topology_config("lassen", nodes_override(state)));
  const auto ring = topo::find_rings(t).rings.front();
  for (auto _ : state) {
    const topo::Router router(t, t.default_routing());
    for (std::size_t i = 0; i < ring.size(); ++i) {
      benchmark::DoNotOptimize(router.route(ring[i], ring[(i + 1) % ring.size()]));
    }
  }
  state.counters["gpus"] = static_cast<double>(ring.size());
}
BENCHMARK(BM_RouteRing)->Arg(2)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond);

// SimGrid allows one engine per process, so the platform is built once, timed by hand.
void BM_BuildSimgridPlatformForRing(benchmark::State& state) {
  const auto t = topo::Topology::build(topo::load_topology_config("lassen", {"cluster.nodes=128"}));
  const topo::Router router(t, t.default_routing());
  const auto ring = topo::find_rings(t).rings.front();
  std::vector<topo::Leg> legs;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    for (auto& leg : router.route(ring[i], ring[(i + 1) % ring.size()]).legs) legs.push_back(leg);
  }
  int argc = 2;
  const char* argv[] = {"bench", "--log=root.thresh:warning", nullptr};
  simgrid::s4u::Engine engine(&argc, const_cast<char**>(argv));
  sim::configure_network_model(engine);
  for (auto _ : state) {
    benchmark::DoNotOptimize(sim::SimgridPlatform::build(t, legs));
  }
  state.counters["gpus"] = static_cast<double>(ring.size());
}
BENCHMARK(BM_BuildSimgridPlatformForRing)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
