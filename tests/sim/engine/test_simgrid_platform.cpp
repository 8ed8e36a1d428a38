// The SimGrid platform obeys the transfer law the model promises: a copy takes
//     sum of latencies on its route + bytes / narrowest effective bandwidth
// (within 0.1%, no TCP corrections); a store-and-forward copy is its legs back to back; flows on
// one link direction share it equally whatever their route latency; the two directions of a link
// do not interfere. Each TEST builds its own engine: run one per process (ctest does).
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "sim/engine/simgrid_platform.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::sim {
namespace {

namespace sg4 = simgrid::s4u;
using topo::RoutingMode;

constexpr double kBytes = 100e6;
constexpr double kTolerance = 1e-3;  // 0.1%

struct Bench {
  topo::Topology topology = topo::Topology::build(topo::load_topology_config("dgx1-v100"));
  std::unique_ptr<sg4::Engine> engine;
  std::unique_ptr<topo::Router> router;
  SimgridPlatform platform;

  explicit Bench(RoutingMode mode) {
    int argc = 2;
    const char* argv[] = {"test", "--log=root.thresh:warning", nullptr};
    engine = std::make_unique<sg4::Engine>(&argc, const_cast<char**>(argv));
    configure_network_model(*engine);
    router = std::make_unique<topo::Router>(topology, mode);
    platform = SimgridPlatform::build(topology, legs_between_all_gpus(*router, topology));
  }

  sg4::Host* host(const std::string& name) const {
    return platform.host(*topology.find_device(name));
  }
  // Runs `body` in an actor on gpu0 and returns the simulated time when everything ended.
  double run(std::function<void()> body) {
    sg4::Actor::create("driver", host("gpu0"), std::move(body));
    engine->run();
    return sg4::Engine::get_clock();
  }
  const topo::Link& link(const std::string& a, const std::string& b) const {
    return topology.links()[*topology.nvlink_between(*topology.find_device(a),
                                                     *topology.find_device(b))];
  }
  double figure(topo::LinkKind kind, bool latency) const {
    for (const topo::Link& l : topology.links()) {
      if (l.kind == kind) return latency ? l.latency.value : l.effective_bandwidth().value;
    }
    return 0;
  }
};

TEST(SimgridPlatform, OneNvlinkCopyIsLatencyPlusSizeOverBandwidth) {
  Bench b(RoutingMode::Direct);
  const double t = b.run([&] { sg4::Comm::sendto(b.host("gpu0"), b.host("gpu3"), kBytes); });
  const topo::Link& l = b.link("gpu0", "gpu3");
  const double expected = l.latency.value + kBytes / (2 * 25e9 * l.efficiency);
  EXPECT_NEAR(t, expected, kTolerance * expected);
}

TEST(SimgridPlatform, MultiHopCutThroughAddsLatenciesAndTakesTheNarrowestLink) {
  Bench b(RoutingMode::Direct);
  const double t = b.run([&] { sg4::Comm::sendto(b.host("gpu0"), b.host("gpu5"), kBytes); });
  // gpu0 > plx0 > cpu0 > cpu1 > plx2 > gpu5: 4 PCIe hops, 1 QPI hop, 2 switch crossings.
  const double latency = 4 * b.figure(topo::LinkKind::Pcie, true) +
                         b.figure(topo::LinkKind::Qpi, true) + 2 * 100e-9;
  const double expected = latency + kBytes / b.figure(topo::LinkKind::Pcie, false);
  EXPECT_NEAR(t, expected, kTolerance * expected);
}

TEST(SimgridPlatform, TwoHopCopyIsItsTwoLegsBackToBack) {
  Bench b(RoutingMode::TwoHopGpu);
  const topo::Route route =
      b.router->route(*b.topology.find_device("gpu0"), *b.topology.find_device("gpu5"));
  ASSERT_EQ(route.legs.size(), 2u);
  const double t = b.run([&] {
    for (const topo::Leg& leg : route.legs) {
      sg4::Comm::sendto(b.platform.host(leg.src()), b.platform.host(leg.dst()), kBytes);
    }
  });
  // gpu0 > gpu1 (one NVLink), then gpu1 > gpu5 (two NVLinks): store and forward.
  const topo::Link& first = b.link("gpu0", "gpu1");
  const topo::Link& second = b.link("gpu1", "gpu5");
  const double expected = first.latency.value + kBytes / (25e9 * first.efficiency) +
                          second.latency.value + kBytes / (50e9 * second.efficiency);
  EXPECT_NEAR(t, expected, kTolerance * expected);
}

TEST(SimgridPlatform, FlowsOnOneLinkShareItEquallyWhateverTheirRouteLatency) {
  Bench b(RoutingMode::Pcie);
  // gpu0 > gpu2 and gpu1 > gpu5 both climb plx0 > cpu0; the second route is longer.
  double end_short = 0, end_long = 0;
  b.run([&] {
    auto c1 = sg4::Comm::sendto_async(b.host("gpu0"), b.host("gpu2"), kBytes);
    auto c2 = sg4::Comm::sendto_async(b.host("gpu1"), b.host("gpu5"), kBytes);
    c1->wait();
    end_short = sg4::Engine::get_clock();
    c2->wait();
    end_long = sg4::Engine::get_clock();
  });
  const double shared = 2 * kBytes / b.figure(topo::LinkKind::Pcie, false);
  EXPECT_NEAR(end_short, shared, 2 * kTolerance * shared);
  EXPECT_NEAR(end_long, shared, 2 * kTolerance * shared);
}

TEST(SimgridPlatform, TheTwoDirectionsOfALinkDoNotInterfere) {
  Bench b(RoutingMode::Direct);
  const double t = b.run([&] {
    auto there = sg4::Comm::sendto_async(b.host("gpu0"), b.host("gpu3"), kBytes);
    auto back = sg4::Comm::sendto_async(b.host("gpu3"), b.host("gpu0"), kBytes);
    there->wait();
    back->wait();
  });
  const topo::Link& l = b.link("gpu0", "gpu3");
  const double expected = l.latency.value + kBytes / l.effective_bandwidth().value;
  EXPECT_NEAR(t, expected, kTolerance * expected);
}

// 32 of Lassen's nodes, with a platform holding the route from the first GPU to the last alone.
struct LassenFirstToLast {
  topo::Topology lassen =
      topo::Topology::build(topo::load_topology_config("lassen", {"cluster.nodes=32"}));
  std::unique_ptr<sg4::Engine> engine;
  int src = lassen.gpus().front(), dst = lassen.gpus().back();
  topo::Route route;
  SimgridPlatform platform;

  LassenFirstToLast() {
    int argc = 1;
    const char* argv[] = {"test", nullptr};
    engine = std::make_unique<sg4::Engine>(&argc, const_cast<char**>(argv));
    configure_network_model(*engine);
    route = topo::Router(lassen, lassen.default_routing()).route(src, dst);
    platform = SimgridPlatform::build(lassen, route.legs);
  }
};

TEST(SimgridPlatform, ALassenNetworkCopyCrossesTheFatTree) {
  LassenFirstToLast b;
  sg4::Actor::create("driver", b.platform.host(b.src), [&] {
    sg4::Comm::sendto(b.platform.host(b.src), b.platform.host(b.dst), kBytes);
  });
  b.engine->run();
  const topo::Leg& leg = b.route.legs[0];
  const double expected = leg.latency(b.lassen).value + kBytes / leg.bandwidth(b.lassen).value;
  EXPECT_NEAR(sg4::Engine::get_clock(), expected, kTolerance * expected);
  // The narrowest link is the NIC's EDR port (12.5 GB/s x efficiency).
  EXPECT_LT(leg.bandwidth(b.lassen).value, 12.5e9);
}

// The platform holds the routes of the legs it was given, one way, and no others: a copy the
// other way is a logic error its caller can catch (SimGrid's own check aborts the process).
TEST(SimgridPlatform, OnlyTheLegsGivenAreRouted) {
  LassenFirstToLast b;
  try {
    sg4::Comm::sendto_init(b.platform.host(b.dst), b.platform.host(b.src))
        ->set_payload_size(1)
        ->start();
    FAIL() << "a copy over a pair without a route started";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("no route from"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuscale::sim
