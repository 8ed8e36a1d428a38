#include "sim/replay/replay_timeline.hpp"

#include <fmt/format.h>

#include <map>
#include <unordered_map>
#include <utility>

#include "topologies/core/units.hpp"

namespace gpuscale::sim {
namespace {

using NodeId = DagExecutor::NodeId;

// The names of tracks and events (see the header).
class TimelineBuilder {
 public:
  TimelineBuilder(const topo::Topology& topology, const topo::Router& router,
                  const std::vector<int>& gpus)
      : topology_(topology), router_(router), gpus_(gpus) {}

  std::string gpu_name(int rank) const {
    return topology_.devices()[static_cast<size_t>(gpus_[static_cast<size_t>(rank)])].name;
  }

  std::string link_track(const topo::Hop& hop) const {
    const topo::Link& link = topology_.links()[static_cast<size_t>(hop.link)];
    const int from = hop.forward ? link.a : link.b;
    const auto& devices = topology_.devices();
    return fmt::format("{} {}>{}", topo::to_string(link.kind),
                       devices[static_cast<size_t>(from)].name,
                       devices[static_cast<size_t>(link.other(from))].name);
  }

  // The route between two ranks, looked up once per pair.
  const topo::Route& route(int src, int dst) {
    auto [it, fresh] = routes_.try_emplace({src, dst});
    if (fresh) {
      it->second = router_.route(gpus_[static_cast<size_t>(src)], gpus_[static_cast<size_t>(dst)]);
    }
    return it->second;
  }

  // "p2p 281.1 MB to gpu5 via gpu1": a transfer on its sender's copies track.
  std::string copy_name(const ScheduleCompiler::AppendedOp& op) {
    const topo::Route& r = route(op.src, op.dst);
    std::string name = fmt::format("{} {} to {}", op.algorithm, format_bytes(Bytes{op.bytes}),
                                   gpu_name(op.dst));
    if (r.legs.size() > 1) {
      name += " via " + topology_.devices()[static_cast<size_t>(r.legs.front().dst())].name;
    }
    return name;
  }

  // "p2p 281.1 MB gpu0>gpu5 leg 2/2": one leg of a transfer on a link track.
  std::string leg_name(const ScheduleCompiler::AppendedOp& op, size_t leg) {
    const size_t legs = route(op.src, op.dst).legs.size();
    std::string name = fmt::format("{} {} {}>{}", op.algorithm, format_bytes(Bytes{op.bytes}),
                                   gpu_name(op.src), gpu_name(op.dst));
    if (legs > 1) name += fmt::format(" leg {}/{}", leg + 1, legs);
    return name;
  }

 private:
  const topo::Topology& topology_;
  const topo::Router& router_;
  const std::vector<int>& gpus_;
  std::map<std::pair<int, int>, topo::Route> routes_;
};

}  // namespace

const char* to_string(KernelCategory category) {
  switch (category) {
    case KernelCategory::forward: return "forward";
    case KernelCategory::backward: return "backward";
    case KernelCategory::update: return "update";
    case KernelCategory::reduction: return "reduction";
    case KernelCategory::copy: return "copy";
    case KernelCategory::input: return "input";
  }
  return "kernel";
}

KernelRecord kernel_record(std::string name, KernelCategory category, std::string layer,
                           double bytes, std::string algorithm) {
  KernelRecord record;
  record.name = std::move(name);
  record.category = category;
  record.layer = std::move(layer);
  record.algorithm = std::move(algorithm);
  record.bytes = bytes;
  return record;
}

std::vector<TimelineEvent> replay_timeline(const topo::Topology& topology,
                                           const topo::Router& router, const std::vector<int>& gpus,
                                           const DagExecutor& dag, ScheduleCompiler& compiler,
                                           const std::vector<KernelRecord>& kernels) {
  TimelineBuilder builder(topology, router, gpus);
  const auto& ops = compiler.appended_ops();
  auto span = [&dag](std::string track, std::string name, std::string category, NodeId node) {
    TimelineEvent event;
    event.track = std::move(track);
    event.name = std::move(name);
    event.category = std::move(category);
    event.start_s = dag.start_time(node);
    event.end_s = dag.end_time(node);
    return event;
  };
  // Each GPU's events together, kernels first, so that its two tracks sit side by side.
  std::vector<std::vector<TimelineEvent>> kernel_events(gpus.size()), copy_events(gpus.size());
  for (const KernelRecord& k : kernels) {
    TimelineEvent event =
        span(builder.gpu_name(k.rank) + " kernels", k.name, to_string(k.category), k.node);
    event.layer = k.layer;
    event.algorithm = k.algorithm;
    event.bytes = k.bytes;
    kernel_events[static_cast<size_t>(k.rank)].push_back(std::move(event));
  }
  std::unordered_map<NodeId, size_t> op_of_node;
  for (size_t i = 0; i < ops.size(); ++i) {
    const ScheduleCompiler::AppendedOp& op = ops[i];
    op_of_node[op.node] = i;
    const bool reduction = op.kind == coll::Op::Kind::Reduce;
    const std::string name = reduction ? fmt::format("reduce ({}) {}", op.algorithm,
                                                     format_bytes(Bytes{op.bytes}))
                                       : builder.copy_name(op);
    TimelineEvent event = span(builder.gpu_name(op.src) + " copies", name,
                               reduction ? "reduction" : "transfer", op.node);
    event.algorithm = op.algorithm;
    event.bytes = op.bytes;
    copy_events[static_cast<size_t>(op.src)].push_back(std::move(event));
  }
  std::vector<TimelineEvent> events;
  for (size_t rank = 0; rank < gpus.size(); ++rank) {
    for (auto* list : {&kernel_events[rank], &copy_events[rank]}) {
      events.insert(events.end(), std::make_move_iterator(list->begin()),
                    std::make_move_iterator(list->end()));
    }
  }
  for (const DagExecutor::LegTiming& leg : dag.leg_timings()) {
    const auto& op = ops[op_of_node.at(leg.node)];
    const std::string name = builder.leg_name(op, leg.leg);
    for (const topo::Hop& hop : compiler.leg_hops(op.src, op.dst, leg.leg)) {
      TimelineEvent event;
      event.track = builder.link_track(hop);
      event.name = name;
      event.category = "link";
      event.start_s = leg.start;
      event.end_s = leg.end;
      event.algorithm = op.algorithm;
      event.bytes = op.bytes;
      events.push_back(std::move(event));
    }
  }
  return events;
}

}  // namespace gpuscale::sim
