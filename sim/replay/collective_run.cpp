#include "sim/replay/collective_run.hpp"

#include <set>

#include "sim/collectives/registry.hpp"
#include "sim/platform/simgrid_platform.hpp"
#include "sim/replay/dag_executor.hpp"

namespace gpuscale::sim {
namespace sg4 = simgrid::s4u;
namespace {

std::vector<std::pair<sg4::Host*, sg4::Host*>> host_legs(const SimgridPlatform& platform,
                                                          const topo::Route& route) {
  std::vector<std::pair<sg4::Host*, sg4::Host*>> legs;
  for (const topo::Leg& leg : route.legs) legs.emplace_back(platform.host(leg.src()), platform.host(leg.dst()));
  return legs;
}

}  // namespace

CollectiveRun simulate_collective(const topo::Topology& topology, const topo::Router& router,
                                  const std::vector<int>& gpus,
                                  const std::vector<std::vector<int>>& rings,
                                  const std::vector<int>& node_of_rank,
                                  const std::string& algorithm, double bytes,
                                  const std::string& protocol, double reduce_bandwidth_Bps) {
  coll::CollectiveRequest request;
  request.bytes = bytes;
  request.ranks = static_cast<int>(gpus.size());
  request.rings = rings;
  request.node_of_rank = node_of_rank;
  request.protocol = coll::protocol_by_name(protocol);
  const coll::Schedule schedule = coll::build_schedule(algorithm, request);

  std::set<std::pair<int, int>> pairs;
  for (const coll::Op& op : schedule.ops) {
    if (op.kind == coll::Op::Kind::Transfer) pairs.insert({op.src, op.dst});
  }
  std::vector<topo::Leg> legs;
  for (const auto& [a, b] : pairs) {
    for (topo::Leg& leg : router.route(gpus[static_cast<size_t>(a)], gpus[static_cast<size_t>(b)]).legs) legs.push_back(leg);
  }
  const auto engine = make_engine();
  const SimgridPlatform platform = SimgridPlatform::build(topology, legs);

  DagExecutor dag;
  std::vector<DagExecutor::NodeId> ids;
  for (const coll::Op& op : schedule.ops) {
    std::vector<DagExecutor::NodeId> deps;
    for (int d : op.deps) deps.push_back(ids[static_cast<size_t>(d)]);
    DagExecutor::Spec spec;
    if (op.kind == coll::Op::Kind::Transfer) {
      const topo::Route route = router.route(gpus[static_cast<size_t>(op.src)], gpus[static_cast<size_t>(op.dst)]);
      spec.kind = DagExecutor::Kind::Transfer;
      spec.legs = host_legs(platform, route);
      spec.bytes = op.bytes;
      double latency = 0;
      for (const topo::Leg& leg : route.legs) latency += leg.latency(topology).value;
      spec.post_delay = (op.latency_steps - 1) * latency;
    } else if (op.kind == coll::Op::Kind::Reduce) {
      spec.kind = DagExecutor::Kind::Compute;
      spec.host = platform.host(gpus[static_cast<size_t>(op.src)]);
      spec.seconds = reduce_bandwidth_Bps > 0 ? op.bytes / reduce_bandwidth_Bps : 0;
    } else {
      spec.seconds = op.seconds;
    }
    ids.push_back(dag.add(std::move(spec), deps));
  }
  sg4::Actor::create("collective", platform.host(gpus[0]), [&dag] { dag.run(); });
  engine->run();
  return {sg4::Engine::get_clock(), dag.activities_started()};
}

double simulate_copy(const topo::Topology& topology, const topo::Router& router, int src, int dst,
                     double bytes) {
  const topo::Route route = router.route(src, dst);
  const auto engine = make_engine();
  const SimgridPlatform platform = SimgridPlatform::build(topology, route.legs);
  DagExecutor dag;
  dag.add({DagExecutor::Kind::Transfer, nullptr, 0, host_legs(platform, route), bytes, 0}, {});
  sg4::Actor::create("copy", platform.host(src), [&dag] { dag.run(); });
  engine->run();
  return sg4::Engine::get_clock();
}

}  // namespace gpuscale::sim
