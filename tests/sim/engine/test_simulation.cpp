// One simulation put together (simulation.hpp): a copy takes its route's closed form, a
// reduction the GPU time its cost gives, and the platform holds the hosts and legs asked for.
// Each TEST builds its own engine: run one per process (ctest does).
#include <gtest/gtest.h>

#include "sim/engine/simulation.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::sim {
namespace {

const topo::Topology& dgx1() {
  static const topo::Topology t = topo::Topology::build(topo::load_topology_config("dgx1-v100"));
  return t;
}

coll::Schedule one_copy(double bytes) {
  coll::Schedule copy{"copy", 2, bytes, {}};
  coll::Op transfer;
  transfer.src = 0;
  transfer.dst = 1;
  transfer.bytes = bytes;
  copy.ops.push_back(transfer);
  return copy;
}

TEST(Simulation, ATwoHopCopyTakesItsRoutesClosedForm) {
  const topo::Topology& t = dgx1();
  const topo::Router router(t, topo::RoutingMode::TwoHopGpu);
  const std::vector<int> gpus = {t.gpus()[0], t.gpus()[5]};
  const double bytes = 64e6;
  const coll::Schedule copy = one_copy(bytes);
  PlatformNeeds needs;
  needs.add(copy, router, gpus);
  ASSERT_EQ(needs.legs.size(), 2u);  // store and forward through another GPU
  Simulation sim(t, router, gpus, needs, reduction_at(0));
  const DagExecutor::NodeId end = sim.append(copy, -1);
  const double seconds = sim.run();
  EXPECT_DOUBLE_EQ(seconds, sim.dag().end_time(end));
  const double closed_form = router.route(gpus[0], gpus[1]).copy_time(t, Bytes{bytes}).value;
  EXPECT_NEAR(seconds / closed_form, 1.0, 1e-3);
  EXPECT_EQ(sim.dag().activities_started(), 2);  // one Comm per leg
}

TEST(Simulation, AReductionTakesBytesOverItsBandwidthOnItsRanksGpu) {
  const topo::Topology& t = dgx1();
  const topo::Router router(t, t.default_routing());
  const std::vector<int> gpus = {t.gpus()[2], t.gpus()[3]};
  coll::Schedule reduce{"reduce", 2, 1e9, {}};
  coll::Op op;
  op.kind = coll::Op::Kind::Reduce;
  op.src = 1;
  op.bytes = 3e9;
  reduce.ops.push_back(op);
  PlatformNeeds needs;
  needs.add(reduce, router, gpus);
  EXPECT_TRUE(needs.legs.empty());
  EXPECT_EQ(needs.hosts, std::vector<int>{gpus[1]});
  Simulation sim(t, router, gpus, needs, reduction_at(750e9));
  EXPECT_NE(sim.host(gpus[1]), nullptr);
  sim.append(reduce, -1);
  EXPECT_NEAR(sim.run(), 3e9 / 750e9, 1e-12);
}

TEST(Simulation, KernelsOnOneHostShareItAndFreeReductionsTakeNoTime) {
  const topo::Topology& t = dgx1();
  const topo::Router router(t, t.default_routing());
  const int gpu = t.gpus()[0];
  PlatformNeeds needs;
  needs.hosts = {gpu};
  EXPECT_EQ(reduction_at(0)(1e9), 0.0);
  Simulation sim(t, router, {gpu}, needs, reduction_at(0));
  DagExecutor::Spec kernel;
  kernel.kind = DagExecutor::Kind::Compute;
  kernel.host = sim.host(gpu);
  kernel.seconds = 2e-3;
  sim.dag().add(kernel, {});
  sim.dag().add(kernel, {});
  EXPECT_NEAR(sim.run(), 4e-3, 1e-12);  // two concurrent kernels share the GPU
}

}  // namespace
}  // namespace gpuscale::sim
