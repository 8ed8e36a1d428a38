// nccl_ring: NCCL's ring allreduce, reduce and broadcast, flow-level.
//
// NCCL cuts the message into chunks that travel each channel's ring; the reduction is fused into
// the copy kernel, so there are no Reduce ops. Allreduce takes 2(p-1) steps (reduce-scatter, then
// allgather), each moving S/(pC) per edge. With many chunks in flight the ring runs as a pipeline:
// after a fill of 2(p-1) hops every edge streams at its own pace, so channel c is one flow per
// ring edge carrying 2(p-1)/p * S/C * wire_ratio bytes whose route latency is paid 2(p-1) times,
// after a Delay of the protocol latency of NCCL's model (tuning.cc):
//   T = [base + (2(p-1) - 2(n-1)) hop_intra + 2(n-1) hop_inter] + 2(p-1) alpha
//       + 2(p-1)/p * S * wire_ratio / (C B)
// on C contention-free channels of bandwidth B and route latency alpha, n nodes. Contention
// between channels sharing a link is the replay's business. O(C p) ops.
//
// Reduce (broadcast): per channel a chain along the ring ending (starting) at the root, p-1 edges
// each carrying S/C * wire_ratio, the latency paid p-1 times (NCCL's PipelineTo/PipelineFrom):
//   T = [base + (p-1 - (n-1)) hop_intra + (n-1) hop_inter] + (p-1) alpha + S wire_ratio / (C B).
#include "sim/collectives/algorithms.hpp"

namespace gpuscale::coll {
namespace {

enum class Direction { ToRoot, FromRoot };

// The ring rotated to start just after the root (ToRoot, ending at it) or at the root (FromRoot).
std::vector<int> chain_of(const std::vector<int>& ring, int root, Direction direction) {
  const int p = static_cast<int>(ring.size());
  int at = 0;
  while (ring[at] != root) ++at;
  const int first = direction == Direction::ToRoot ? at + 1 : at;
  std::vector<int> chain;
  for (int i = 0; i < p; ++i) chain.push_back(ring[(first + i) % p]);
  return chain;
}

std::vector<int> append_chains(ScheduleBuilder& b, const CollectiveRequest& r,
                               const std::vector<int>& deps, Direction direction) {
  const auto rings = channel_rings(r);
  const int nodes = node_count(r);
  const double latency = r.protocol.ring_latency_s(r.ranks - 1, nodes - 1);
  const std::vector<int> start = b.gate(latency, deps);
  const double bytes = r.bytes / double(rings.size()) * r.protocol.wire_ratio;
  std::vector<int> flows;
  for (const auto& ring : rings) {
    for (int flow : pipelined_chain(b, chain_of(ring, r.root, direction), bytes, start)) {
      flows.push_back(flow);
    }
  }
  return flows;
}

}  // namespace

std::vector<int> append_nccl_ring_reduce(ScheduleBuilder& b, const CollectiveRequest& r,
                                         const std::vector<int>& deps) {
  return append_chains(b, r, deps, Direction::ToRoot);
}

std::vector<int> append_nccl_ring_broadcast(ScheduleBuilder& b, const CollectiveRequest& r,
                                            const std::vector<int>& deps) {
  return append_chains(b, r, deps, Direction::FromRoot);
}

Schedule build_nccl_ring(const CollectiveRequest& r) {
  ScheduleBuilder b("nccl_ring", r);
  if (r.kind == Collective::Reduce) {
    append_nccl_ring_reduce(b, r, {});
  } else if (r.kind == Collective::Broadcast) {
    append_nccl_ring_broadcast(b, r, {});
  } else {
    const int p = r.ranks, nodes = node_count(r);
    const int steps = 2 * (p - 1);
    const std::vector<int> start = b.gate(r.protocol.ring_latency_s(steps, 2 * (nodes - 1)), {});
    const auto rings = channel_rings(r);
    const double bytes = double(steps) / p * r.bytes / double(rings.size()) * r.protocol.wire_ratio;
    for (const auto& ring : rings) {
      for (int i = 0; i < p; ++i) b.transfer(ring[i], ring[(i + 1) % p], bytes, steps, start);
    }
  }
  return b.finish();
}

}  // namespace gpuscale::coll
