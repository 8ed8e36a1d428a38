// Lock-step schedules evaluated depth by depth from their link loads (sim/engine/lock_step.hpp)
// against SimGrid running every flow of the same schedule on the same machine, and against the
// closed form where no link is shared. Each SimGrid run is in a child process (run_isolated).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "sim/collectives/registry.hpp"
#include "sim/engine/isolated.hpp"
#include "sim/engine/lock_step.hpp"
#include "sim/engine/schedule_nodes.hpp"
#include "sim/experiment/collective_run.hpp"
#include "sim/experiment/machine_setup.hpp"
#include "sim/replay/protocol_choice.hpp"

namespace gpuscale::sim {
namespace {

// The routes between the ranks of a job on GPUs `gpus`, each looked up once.
class RankRoutes {
 public:
  RankRoutes(const topo::Router& router, const std::vector<int>& gpus)
      : router_(router), gpus_(gpus) {}
  RankRoute lookup() {
    return [this](int a, int b) -> const topo::Route& {
      auto [it, fresh] = routes_.try_emplace({a, b});
      if (fresh)
        it->second = router_.route(gpus_[static_cast<size_t>(a)], gpus_[static_cast<size_t>(b)]);
      return it->second;
    };
  }

 private:
  const topo::Router& router_;
  std::vector<int> gpus_;
  std::map<std::pair<int, int>, topo::Route> routes_;
};

struct Both {
  double simulated_s = 0, estimated_s = 0;
};

// `algorithm` over `gpus` GPUs of `machine` (sized to them), reductions at `reduce_Bps`.
Both simulated_and_estimated(const std::string& machine_name, int gpus,
                             const std::string& algorithm, double bytes, double reduce_Bps,
                             coll::Collective kind = coll::Collective::AllReduce,
                             const std::vector<std::string>& overrides = {}) {
  const std::string out = run_isolated([&] {
    const topo::Topology machine = machine_for(machine_name, overrides, gpus);
    const Placement placement = place_job(machine, gpus);
    const topo::Router router(machine, machine.default_routing());
    const double simulated =
        simulate_collective(machine, router, placement.gpus, placement.rings,
                            placement.node_of_rank, algorithm, bytes, "simple", reduce_Bps, kind,
                            FlowDetail::EveryFlow)
            .seconds;
    coll::CollectiveRequest request;
    request.kind = kind;
    request.bytes = bytes;
    request.ranks = gpus;
    request.rings = placement.rings;
    request.node_of_rank = placement.node_of_rank;
    // The protocol as simulate_collective sets it: Simple, in the GPUs' NCCL version.
    ProtocolChoice(machine, router, placement.gpus, placement.rings, placement.node_of_rank,
                   "simple")
        .fill(request);
    const coll::Schedule schedule = coll::build_schedule(algorithm, request);
    RankRoutes routes(router, placement.gpus);
    const RankRoute route = routes.lookup();
    const double estimated =
        lock_step_seconds(lock_step_depths(schedule, machine, op_routes(schedule, route)), reduce_Bps);
    return fmt::format("{:.17g} {:.17g}", simulated, estimated);  // to_string keeps 6 decimals
  });
  Both both;
  const size_t space = out.find(' ');
  both.simulated_s = std::stod(out.substr(0, space));
  both.estimated_s = std::stod(out.substr(space + 1));
  return both;
}

// `algorithm`'s `kind` of `bytes` over `gpus` GPUs of `machine`, reductions at 700 GB/s: evaluated
// from link loads, it takes what SimGrid running every flow takes, to 1e-9.
void expect_agrees_with_every_flow(const std::string& machine, int gpus,
                                   const std::string& algorithm, coll::Collective kind,
                                   double bytes) {
  const Both b = simulated_and_estimated(machine, gpus, algorithm, bytes, 700e9, kind);
  EXPECT_NEAR(b.estimated_s / b.simulated_s, 1.0, 1e-9)
      << algorithm << " " << coll::to_string(kind) << " " << machine << " " << gpus << " GPUs "
      << bytes << " B: simulated " << b.simulated_s << " s, estimated " << b.estimated_s << " s";
}

TEST(LockStep, TheExchangeAlgorithmsSayTheyRunInLockStep) {
  coll::CollectiveRequest request;
  request.bytes = 1e6;
  request.ranks = 8;
  EXPECT_TRUE(coll::build_schedule("recursive_doubling", request).lock_step);
  EXPECT_TRUE(coll::build_schedule("rabenseifner", request).lock_step);
  EXPECT_TRUE(coll::build_schedule("nccl_ring", request).lock_step);
  EXPECT_TRUE(coll::build_schedule("nccl_tree", request).lock_step);
  EXPECT_TRUE(coll::build_schedule("p2p", request).lock_step);
  EXPECT_TRUE(coll::build_schedule("nccl_reduce_bcast", request).lock_step);
  EXPECT_TRUE(coll::build_schedule("ring", request).lock_step);
  EXPECT_TRUE(coll::build_schedule("hierarchical", request).lock_step);
  EXPECT_FALSE(coll::build_schedule("ring", request).ops_start_when_ready);
  for (int ranks : {8, 6}) {  // a binomial tree's rounds at any count, each op when it can start
    request.ranks = ranks;
    const coll::Schedule tree = coll::build_schedule("binomial_tree", request);
    EXPECT_TRUE(tree.lock_step && tree.ops_start_when_ready) << ranks;
  }
  request.ranks = 6;  // MPICH folds two pairs first: their first round comes a round late
  EXPECT_FALSE(coll::build_schedule("recursive_doubling", request).lock_step);
  EXPECT_FALSE(coll::build_schedule("rabenseifner", request).lock_step);
}

// On a power-of-two job every pair of a round is alike, so the depths are the simulation's
// rounds: the two agree to rounding (2e-16 when this was written), from latency-bound to
// bandwidth-bound sizes, with Lassen's NVLink rounds inside a node and its shared InfiniBand
// rails between nodes.
TEST(LockStep, AgreesWithEveryFlowSimulatedOnLassen) {
  for (const std::string algorithm : {"recursive_doubling", "rabenseifner"}) {
    for (int gpus : {16, 64}) {
      for (double bytes : {4096.0, 256e3, 64e6}) {
        const Both b = simulated_and_estimated("lassen", gpus, algorithm, bytes, 700e9);
        EXPECT_NEAR(b.estimated_s / b.simulated_s, 1.0, 1e-9)
            << algorithm << " " << gpus << " GPUs " << bytes << " B: simulated " << b.simulated_s
            << " s, estimated " << b.estimated_s << " s";
      }
    }
  }
}

// NCCL's pipelined rings, chains and trees are one delay and then flows of equal bytes: the flows
// end when the slowest does, at the share of the most loaded link, so evaluating them from link
// loads agrees with SimGrid running every flow, latency steps included. Lassen's rings mix
// NVLink, X-Bus and InfiniBand hops, its trees load the heads' rails twice; with 20 us cables its
// pipelines' mean route latency exceeds NCCL's hop latency, whose excess each step then pays.
// MXNet's kvstore=nccl runs a reduce chain, then a broadcast chain once every flow of it ends.
TEST(LockStep, NcclPipelinesAgreeWithEveryFlowSimulated) {
  using coll::Collective;
  struct Machine {
    std::string name;
    int gpus;
    std::vector<std::string> overrides;
  };
  const std::vector<Machine> machines = {
      {"lassen", 16, {}},
      {"lassen", 64, {}},
      {"lassen", 64, {"link_kinds.infiniband.latency=20 us"}},
      {"dgx-h200-superpod", 32, {}}};
  const std::vector<std::pair<std::string, Collective>> cases = {
      {"nccl_ring", Collective::AllReduce}, {"nccl_ring", Collective::AllGather},
      {"nccl_ring", Collective::Reduce},    {"nccl_ring", Collective::Broadcast},
      {"nccl_tree", Collective::AllReduce}, {"nccl_reduce_bcast", Collective::AllReduce}};
  for (const auto& [algorithm, kind] : cases) {
    for (const Machine& m : machines) {
      for (double bytes : {4096.0, 64e6}) {
        const Both b =
            simulated_and_estimated(m.name, m.gpus, algorithm, bytes, 0, kind, m.overrides);
        EXPECT_NEAR(b.estimated_s / b.simulated_s, 1.0, 1e-9)
            << algorithm << " " << coll::to_string(kind) << " " << m.name << " " << m.gpus
            << " GPUs " << (m.overrides.empty() ? "" : m.overrides[0]) << " " << bytes
            << " B: simulated " << b.simulated_s << " s, estimated " << b.estimated_s << " s";
      }
    }
  }
}

// A binomial tree's rounds move the same bytes, but a pair within a leaf or a node ends before one
// across the spine: each op starts when its own dependencies end, each transfer taking its time
// from its depth's link loads, and every reduction of a depth summing the same bytes after the
// transfer it sums. So timed, the tree agrees with SimGrid running every flow: on 64 of Lassen's
// nodes (0.76 us apart depth by depth), off a power of two on Lassen and a SuperPOD, on the
// DGX-1's cube-mesh and on a PCIe tree, for all three collectives the algorithm implements.
TEST(LockStep, BinomialTreesAgreeWithEveryFlowSimulated) {
  using coll::Collective;
  for (const auto& [machine, gpus] : std::vector<std::pair<std::string, int>>{
           {"lassen", 256}, {"lassen", 48}, {"dgx-h200-superpod", 96}, {"dgx1-v100", 5},
           {"dss8440", 6}}) {
    for (Collective kind : {Collective::AllReduce, Collective::Reduce, Collective::Broadcast}) {
      for (double bytes : {4096.0, 64e6})
        expect_agrees_with_every_flow(machine, gpus, "binomial_tree", kind, bytes);
    }
  }
}

// MXNet's P2P copies converge on one GPU: its gathers start together, the sum waits for all of
// them and the copies back for the sum, so each depth ends with its slowest copy in SimGrid too.
// Lassen's copies into GPU0 cross NVLink, the X-Bus and one InfiniBand port; a SuperPOD's cross
// NVSwitch and one NDR rail, where the first node's copies end long before the others'.
TEST(LockStep, P2pCopiesAgreeWithEveryFlowSimulated) {
  using coll::Collective;
  for (const std::string machine : {"lassen", "dgx-h200-superpod"}) {
    for (int gpus : {32, 64}) {
      for (Collective kind : {Collective::AllReduce, Collective::Reduce, Collective::Broadcast}) {
        for (double bytes : {4096.0, 64e6})
          expect_agrees_with_every_flow(machine, gpus, "p2p", kind, bytes);
      }
    }
  }
}

// MPI's ring (and the leaders' ring of the two-level allreduce) is three depths: every rank's
// scatter flow, its sum once the flows into and out of it end, its gather flow. A gather takes
// its scatter's route and bytes, so the slowest chain is the slowest scatter, a sum and the
// slowest gather, as the depths say, unless a gather that starts early shares a link with a
// scatter still running. On the shipped clusters none does: from NVLink pairs to fat trees
// whose neighbours meet at a leaf or across the spine, both ways agree to SimGrid's nanosecond.
// (A binomial tree does not: on 64 of Lassen's nodes a round's pairs across the spine end after
// those within a leaf, and the next round's slowest pair need not follow them; 0.76 us apart
// depth by depth. Its ops are timed apart instead: BinomialTreesAgreeWithEveryFlowSimulated.)
TEST(LockStep, MpiRingsAgreeWithEveryFlowSimulated) {
  for (const std::string algorithm : {"ring", "hierarchical"}) {
    for (const auto& [machine, gpus] : std::vector<std::pair<std::string, int>>{
             {"lassen", 64}, {"lassen", 256}, {"dgx-a100-superpod", 64},
             {"dgx-h100-superpod", 512}}) {
      for (double bytes : {4096.0, 1e6, 64e6}) {
        const Both b = simulated_and_estimated(machine, gpus, algorithm, bytes, 700e9);
        EXPECT_NEAR(b.estimated_s, b.simulated_s, 1e-9)
            << algorithm << " " << machine << " " << gpus << " GPUs " << bytes
            << " B: simulated " << b.simulated_s << " s, estimated " << b.estimated_s << " s";
      }
    }
  }
}

// 100 MiB allreduced by `algorithm` over `gpus` GPUs of a SuperPOD as `gpuscale collective` runs
// it (NCCL's choice of protocol), simulated in `detail`.
double superpod_allreduce_s(const std::string& algorithm, int gpus, FlowDetail detail) {
  return std::stod(run_isolated([&] {
    const topo::Topology machine = machine_for("dgx-h200-superpod", {}, gpus);
    const Placement placement = place_job(machine, gpus);
    const topo::Router router(machine, machine.default_routing());
    return fmt::format("{:.17g}", simulate_collective(machine, router, placement.gpus,
                                                      placement.rings, placement.node_of_rank,
                                                      algorithm, 100.0 * 1024 * 1024, "auto",
                                                      700e9, coll::Collective::AllReduce, detail)
                                      .seconds);
  }));
}

// `gpuscale collective` evaluates lock-step schedules over more than 16 GPUs from their link
// loads, as the training replay does, and every flow below: at 64 to 512 GPUs of a SuperPOD,
// 100 MiB, in NCCL's choice of protocol, both ways agree to a nanosecond (SimGrid's timing
// precision). At 512 GPUs (64 nodes) a tree's flows that share the most loaded link start apart
// (leaf and spine routes), and those depths are run in closed time steps (fluid_depth.hpp).
TEST(LockStep, ALoneCollectiveAtScaleAgreesWithEveryFlowSimulated) {
  for (const std::string algorithm : {"nccl_ring", "nccl_tree", "nccl_auto"}) {
    for (int gpus : {64, 128, 256, 512}) {
      const double replayed = superpod_allreduce_s(algorithm, gpus, FlowDetail::AsReplayed);
      const double every_flow = superpod_allreduce_s(algorithm, gpus, FlowDetail::EveryFlow);
      EXPECT_NEAR(replayed, every_flow, 1e-9)
          << algorithm << " " << gpus << " GPUs: from link loads " << replayed
          << " s, every flow " << every_flow << " s";
    }
  }
}

// The compiler keeps each lock-step schedule's cost for the next one alike; a ring allreduce and
// a ring allgather of one size have as many flows from the same first rank, and must not share
// it: one after the other they take the sum of their own costs.
TEST(LockStep, AnAllgatherAfterAnAllreduceOfOneSizeKeepsItsOwnCost) {
  const std::string out = run_isolated([] {
    const topo::Topology machine = machine_for("lassen", {}, 32);
    const Placement placement = place_job(machine, 32);
    const topo::Router router(machine, machine.default_routing());
    auto schedule = [&](coll::Collective kind) {
      coll::CollectiveRequest request;
      request.kind = kind;
      request.bytes = 64e6;
      request.ranks = 32;
      request.rings = placement.rings;
      request.node_of_rank = placement.node_of_rank;
      request.protocol = coll::protocol_by_name("simple");
      return coll::build_schedule("nccl_ring", request);
    };
    const coll::Schedule allreduce = schedule(coll::Collective::AllReduce);
    const coll::Schedule allgather = schedule(coll::Collective::AllGather);
    RankRoutes routes(router, placement.gpus);
    const RankRoute route = routes.lookup();
    const double expected = lock_step_seconds(lock_step_depths(allreduce, machine, op_routes(allreduce, route)), 0) +
                            lock_step_seconds(lock_step_depths(allgather, machine, op_routes(allgather, route)), 0);
    const auto engine = make_engine();
    const SimgridPlatform platform =
        SimgridPlatform::build(machine, {}, {placement.gpus[0]});
    ScheduleCompiler compiler(machine, router, platform, placement.gpus,
                              [](double) { return 0.0; });
    DagExecutor dag;
    const DagExecutor::NodeId reduced = compiler.append_lock_step(dag, allreduce, -1, 0);
    const DagExecutor::NodeId gathered = compiler.append_lock_step(dag, allgather, reduced, 0);
    dag.run();
    return fmt::format("{:.17g}", dag.end_time(gathered) / expected);
  });
  EXPECT_NEAR(std::stod(out), 1.0, 1e-9);
}

// Two ranks on one NVLink with nothing shared: one round of recursive doubling is the closed
// form alpha + S/B, and its sum 3S/gamma.
TEST(LockStep, OneRoundIsTheAlphaBetaGammaClosedForm) {
  const double bytes = 64e6, gamma = 700e9;
  const std::string out = run_isolated([&] {
    const topo::Topology machine = machine_for("dgx1-v100", {}, 2);
    const Placement placement = place_job(machine, 2);
    const topo::Router router(machine, machine.default_routing());
    const topo::Route r01 = router.route(placement.gpus[0], placement.gpus[1]);
    const topo::Route r10 = router.route(placement.gpus[1], placement.gpus[0]);
    coll::CollectiveRequest request;
    request.bytes = bytes;
    request.ranks = 2;
    const coll::Schedule s = coll::build_schedule("recursive_doubling", request);
    const RankRoute route = [&](int a, int) -> const topo::Route& { return a == 0 ? r01 : r10; };
    const double leg_s = r01.copy_time(machine, Bytes{bytes}).value;
    const double expected = leg_s + 3 * bytes / gamma;
    return fmt::format("{:.17g}",
                       lock_step_seconds(lock_step_depths(s, machine, op_routes(s, route)), gamma) / expected);
  });
  EXPECT_NEAR(std::stod(out), 1.0, 1e-9);
}

// A job on `gpus` GPUs of the shipped machine `name`, sized to them, and its routes.
struct Job {
  Job(const std::string& name, int gpus)
      : machine(machine_for(name, {}, gpus)),
        placement(place_job(machine, gpus)),
        router(machine, machine.default_routing()),
        routes(router, placement.gpus),
        route(routes.lookup()) {}

  // `algorithm`'s allreduce of `bytes` over the first `ranks` GPUs (all of them over the job's
  // rings, fewer over none), in NCCL's Simple protocol.
  coll::Schedule schedule(const std::string& algorithm, double bytes, int ranks) const {
    coll::CollectiveRequest request;
    request.bytes = bytes;
    request.ranks = ranks;
    request.rings = placement.rings;
    request.node_of_rank = placement.node_of_rank;
    if (static_cast<size_t>(ranks) < placement.gpus.size()) {
      request.rings = {};
      request.node_of_rank.resize(static_cast<size_t>(ranks));
    }
    ProtocolChoice(machine, router, placement.gpus, placement.rings, placement.node_of_rank,
                   "simple")
        .fill(request);
    return coll::build_schedule(algorithm, request);
  }
  LockStepShape shape_of(const coll::Schedule& schedule) const {
    return LockStepShape(schedule, machine, op_routes(schedule, route));
  }

  const topo::Topology machine;
  const Placement placement;
  const topo::Router router;
  RankRoutes routes;
  const RankRoute route;
};

void expect_same_depths(const std::vector<LockStepDepth>& shared,
                        const std::vector<LockStepDepth>& fresh) {
  ASSERT_EQ(shared.size(), fresh.size());
  for (size_t k = 0; k < shared.size(); ++k) {
    EXPECT_EQ(shared[k].transfer_s, fresh[k].transfer_s) << "depth " << k;
    EXPECT_EQ(shared[k].reduce_bytes, fresh[k].reduce_bytes) << "depth " << k;
  }
}

// A shape made from one schedule evaluates another that differs only in bytes (a replay's gradient
// buckets) exactly as a shape of its own would: the same depths and link bytes, to the bit, for
// NCCL's ring and its trees.
TEST(LockStep, AShapeEvaluatesSchedulesOfOtherSizesAsTheirOwnWould) {
  const int gpus = 64;
  const Job job("lassen", gpus);
  for (const std::string algorithm : {"nccl_ring", "nccl_tree"}) {
    SCOPED_TRACE(algorithm);
    const coll::Schedule small = job.schedule(algorithm, 1e6, gpus);
    const coll::Schedule large = job.schedule(algorithm, 5e7, gpus);
    const LockStepShape shape = job.shape_of(small);
    ASSERT_TRUE(shape.fits(LockStepShape::places_of(large)));
    const LockStepShape own = job.shape_of(large);
    const std::vector<LockStepDepth> fresh = own.depths(large);
    expect_same_depths(shape.depths(large), fresh);
    EXPECT_GT(lock_step_seconds(fresh, 0), lock_step_seconds(shape.depths(small), 0));
    std::vector<double> shared_bytes(job.machine.links().size() * 2), fresh_bytes = shared_bytes;
    shape.add_link_bytes(large, shared_bytes);
    own.add_link_bytes(large, fresh_bytes);
    EXPECT_EQ(shared_bytes, fresh_bytes);
    EXPECT_GT(*std::max_element(fresh_bytes.begin(), fresh_bytes.end()), 0);
    // Fewer ranks: another shape.
    EXPECT_FALSE(shape.fits(LockStepShape::places_of(job.schedule(algorithm, 5e7, 8))));
  }
}

// On 512 GPUs of a SuperPOD, a tree's depths hold groups of transfers that start apart (leaf and
// spine routes), one group per rail and all alike; a shape steps one in closed time steps and its
// twins take its end (lock_step.cpp, DepthGroups). What a shape learnt of its twins for one
// schedule must not give the next its ends: one shape evaluates a small, a large and the small
// schedule again as shapes of their own do.
TEST(LockStep, TwinGroupsShareTheirStepsOnlyWithinOneSchedule) {
  const int gpus = 512;
  const Job job("dgx-h200-superpod", gpus);
  const coll::Schedule small = job.schedule("nccl_tree", 1e6, gpus);
  const coll::Schedule large = job.schedule("nccl_tree", 5e7, gpus);
  const LockStepShape shape = job.shape_of(small);
  for (const coll::Schedule* schedule : {&small, &large, &small}) {
    expect_same_depths(shape.depths(*schedule), job.shape_of(*schedule).depths(*schedule));
  }
  EXPECT_GT(lock_step_seconds(shape.depths(large), 0), lock_step_seconds(shape.depths(small), 0));
}

}  // namespace
}  // namespace gpuscale::sim
