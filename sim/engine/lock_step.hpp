// Lock-step schedules (coll::Schedule::lock_step: MPICH's pairwise exchanges on a power of two
// ranks, and NCCL's pipelined rings, chains and trees, whose flows all start after one delay)
// evaluated depth by depth from their link loads, instead of flow by flow. A recursive-doubling
// allreduce over 1024 GPUs is 10,240 flows, and a ResNet-50 iteration that sends every small
// tensor through one (Aluminum's host-transfer path) some 3 million: minutes of SimGrid per
// configuration. A ring allreduce over 16,384 GPUs is 131,072 concurrent flows (8 channels), and
// SimGrid rescans its running communications at every completion: hours.
//
// An op's depth is one more than its deepest dependency's; the ops of one depth start together.
// The depth's transfers share links as SimGrid's max-min sharing does on this platform (CM02, no
// TCP window; sim/engine/simgrid_platform.hpp): on leg i of its route a transfer gets, on each
// link, the link's bandwidth over the number of the depth's transfers whose leg i crosses it, and
// the narrowest of those shares; the leg takes its latency plus bytes over that share. That closed
// form is kept where it is exact: every transfer has one leg, and every transfer through the
// slowest one's narrowest link starts with it, carries its bytes and has no narrower share
// elsewhere (they then get exactly that share, and no flow ends later). Elsewhere, as where a
// tree's flows reach one NIC across a leaf and across a spine and so start apart, each group of
// transfers that share links runs in closed time steps (fluid_depth.hpp). The depth's reductions
// run on their GPUs meanwhile.
//
// A schedule whose ops start when ready (Schedule::ops_start_when_ready: binomial trees, whose
// pairs within a leaf end before those across the spine) times each op apart instead: it starts
// when its own dependencies end, a transfer taking its closed form over its depth's link loads,
// and each depth charges what its latest op adds to the end of those before it.
//
// What this gives up (docs/collectives.md, "Lock-step schedules at scale"): a pair that finishes
// a round early waits for the slowest pair, which changes nothing where all pairs of a round are
// alike, as between the identical nodes of a cluster. (MPICH's folds for a rank count that is
// not a power of two put some pairs' first round one depth late; such schedules are not
// lock-step.)
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "sim/collectives/schedule.hpp"
#include "topologies/src/routing.hpp"

namespace gpuscale::sim {

// How a command simulates its collectives: as a training replay does (lock-step schedules over
// more than kFullComputeUpToGpus ranks evaluated depth by depth from their link loads,
// sim/replay/replay.hpp), or every flow in SimGrid, which the other agrees with
// (tests/sim/engine/test_lock_step.cpp) and takes minutes at thousands of GPUs.
enum class FlowDetail { AsReplayed, EveryFlow };

struct LockStepDepth {
  double transfer_s = 0;    // the depth's slowest transfer or delay (0: none)
  double reduce_bytes = 0;  // the depth's largest reduction, bytes of memory traffic (0: none)
};

// The route between two ranks of the schedule.
using RankRoute = std::function<const topo::Route&(int src_rank, int dst_rank)>;

// Per pipeline id (coll::Op::pipeline), what a step of it costs beyond the latency its schedule
// already paid per step (Schedule::pipeline_step_latency_s): the excess, if any, of the mean
// route latency of its flows. Flow by flow and depth by depth charge it alike.
std::map<int, double> pipeline_excess_latencies(const coll::Schedule& schedule,
                                                const topo::Topology& topology,
                                                const RankRoute& route);

// Per op of `schedule`, its route (null for ops that are not transfers), each looked up once: a
// tree over 16,384 GPUs has half a million transfers, and the lookups were most of its cost. The
// routes `route` hands out must outlive the result.
using OpRoutes = std::vector<const topo::Route*>;
OpRoutes op_routes(const coll::Schedule& schedule, const RankRoute& route);

// What of a lock-step schedule's evaluation depends only on which rank sends to which at which
// depth: each transfer's link directions, latencies and shares of the links its depth loads.
// Schedules that differ only in bytes, latency steps, delays and reductions (a replay's gradient
// buckets of different sizes over one ring: five over 131,072 flows for ResNet-50 on 16,384
// GPUs) evaluate from one shape, their routes walked once.
class LockStepShape {
 public:
  // Where an op sits in its schedule, all that a shape depends on.
  struct Place {
    coll::Op::Kind kind = coll::Op::Kind::Transfer;
    int src = -1, dst = -1, pipeline = -1, depth = 0;
    bool operator==(const Place&) const = default;
  };
  static std::vector<Place> places_of(const coll::Schedule& schedule);
  static std::uint64_t hash_of(const std::vector<Place>& places);

  // The shape of `schedule`, its transfers along `routes` (op_routes), which must outlive it.
  LockStepShape(const coll::Schedule& schedule, const topo::Topology& topology, OpRoutes routes);
  ~LockStepShape();
  LockStepShape(LockStepShape&&) noexcept;

  // Whether a schedule whose ops sit at `places` (places_of) has this shape.
  bool fits(const std::vector<Place>& places) const;

  // The depths of `schedule`, which has this shape, in order. A transfer standing for a pipeline
  // (coll::Op::pipeline) pays its latency steps as the replay's flows do: the excess of its
  // pipeline's mean route latency over what the schedule paid per step, less its own route's
  // latency paid once.
  std::vector<LockStepDepth> depths(const coll::Schedule& schedule) const;
  // Adds each transfer's bytes to every link direction it crosses (link_direction).
  void add_link_bytes(const coll::Schedule& schedule, std::vector<double>& link_bytes) const;

 private:
  struct Data;
  std::vector<Place> places_;
  std::unique_ptr<Data> data_;
};

// The depths of `schedule` (LockStepShape::depths), its transfers along `routes`.
std::vector<LockStepDepth> lock_step_depths(const coll::Schedule& schedule,
                                            const topo::Topology& topology, const OpRoutes& routes);

// Their total with every reduction taking bytes / `reduce_bandwidth_Bps` (0: free): what the
// depths cost on an otherwise idle machine.
double lock_step_seconds(const std::vector<LockStepDepth>& depths, double reduce_bandwidth_Bps);

}  // namespace gpuscale::sim
