// nccl_ring: NCCL's ring allreduce, allgather, reducescatter, reduce and broadcast, flow-level,
// and NCCL's all-to-all (which has no ring: NCCL runs it as grouped sends and receives).
//
// NCCL cuts the message into chunks that travel each channel's ring; the reduction is fused into
// the copy kernel, so there are no Reduce ops. Allreduce takes 2(p-1) steps (reduce-scatter, then
// allgather), each moving S/(pC) per edge. With many chunks in flight the ring runs as a pipeline:
// after a fill of 2(p-1) hops every edge streams at its own pace, so channel c is one flow per
// ring edge carrying 2(p-1)/p * S/C * wire_ratio bytes, after a Delay of the protocol latency of
// NCCL's model (tuning.cc). NCCL's hop latency h is its measure of a whole hop, wire included, so
// a step costs the larger of h and the ring's mean route latency alpha (a chunk crosses 2(p-1)
// edges in turn: Op::pipeline); the flows pay only alpha's excess:
//   T = [base + (2(p-1) - 2(n-1)) hop_intra + 2(n-1) hop_inter] + 2(p-1) max(0, alpha - h)
//       + 2(p-1)/p * S * wire_ratio / (C B)
// on C contention-free channels of bandwidth B, n nodes, h the Delay's hop part over its steps.
// Contention between channels sharing a link is the replay's business. O(C p) ops.
//
// Allgather and reducescatter are the two halves of that ring (NCCL's all_gather.h and
// reduce_scatter.h run p-1 of its steps), S the gathered output or the scattered input
// (request.hpp): per channel one flow per edge of (p-1)/p * S/C * wire_ratio, latency paid p-1
// times, after NCCL's latency for p-1 steps, n-1 of them inter-node:
//   T = [base + (p-1 - (n-1)) hop_intra + (n-1) hop_inter] + (p-1) max(0, alpha - h)
//       + (p-1)/p * S * wire_ratio / (C B)
// so that allgather + reducescatter is the allreduce plus one base latency.
//
// Reduce (broadcast): per channel a chain along the ring ending (starting) at the root, p-1 edges
// each carrying S/C * wire_ratio, p-1 steps of the larger of h and the chain's mean latency
// (NCCL's PipelineTo/PipelineFrom):
//   T = [base + (p-1 - (n-1)) hop_intra + (n-1) hop_inter] + (p-1) max(0, alpha - h)
//       + S wire_ratio / (C B).
//
// All-to-all: NCCL has no all-to-all collective before 2.28 (ncclAlltoAll); nccl-tests'
// alltoall.cu (AlltoAllRunColl) then issues, inside one ncclGroupStart/End, an ncclSend and an
// ncclRecv of S/p for every peer, which NCCL progresses concurrently. So each rank sends one
// direct flow of S/p * wire_ratio to each of the p-1 others (its own block is a local copy, not
// modelled), all at once after one step of protocol latency [?]: NCCL's model has no p2p
// latency, so base + one hop (inter-node when the ranks span nodes) stands for it:
//   T = [base + hop] + alpha + S/p * wire_ratio / B   without contention;
// with it, each rank's links carry (p-1)/p * S, which is nccl-tests' busbw for all-to-all.
// p(p-1) ops: 261,632 at 512 ranks, what NCCL itself moves.
#include "sim/collectives/algorithms.hpp"

namespace gpuscale::coll {
namespace {

enum class Direction { ToRoot, FromRoot };

// NCCL's latency per step of a ring collective, the Delay before its flows having paid it.
double mean_hop_latency_s(const Protocol& protocol, const RingSteps& s) {
  return s.steps > 0 ? protocol.ring_hops_latency_s(s.steps, s.inter_steps) / s.steps : 0.0;
}

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
  // Reduce and broadcast chains cost the same (nccl_reduce_bcast calls this for an allreduce).
  const RingSteps s = nccl_ring_steps(Collective::Broadcast, r.ranks, node_count(r));
  const std::vector<int> start = b.gate(r.protocol.ring_latency_s(s.steps, s.inter_steps), deps);
  const double bytes = s.edge_share * r.bytes / double(rings.size()) * r.protocol.wire_ratio;
  const double paid_per_step = mean_hop_latency_s(r.protocol, s);
  std::vector<int> flows;
  for (const auto& ring : rings) {
    for (int flow : pipelined_chain(b, chain_of(ring, r.root, direction), bytes, start,
                                    b.new_pipeline(paid_per_step))) {
      flows.push_back(flow);
    }
  }
  return flows;
}

// Allreduce (two passes round every channel's ring), allgather or reducescatter (one): per edge
// one flow of NCCL's edge share of S/C (nccl_ring_steps) x wire_ratio, its latency paid once per
// step, after NCCL's latency for those steps.
void append_ring_pipeline(ScheduleBuilder& b, const CollectiveRequest& r) {
  const int p = r.ranks;
  const RingSteps s = nccl_ring_steps(r.kind, p, node_count(r));
  const std::vector<int> start = b.gate(r.protocol.ring_latency_s(s.steps, s.inter_steps), {});
  const auto rings = channel_rings(r);
  const double bytes = s.edge_share * r.bytes / double(rings.size()) * r.protocol.wire_ratio;
  const double paid_per_step = mean_hop_latency_s(r.protocol, s);
  b.reserve(rings.size() * static_cast<std::size_t>(p));
  for (const auto& ring : rings) {
    const int pipeline = b.new_pipeline(paid_per_step);
    for (int i = 0; i < p; ++i) {
      b.transfer(ring[i], ring[(i + 1) % p], bytes, s.steps, start, pipeline);
    }
  }
}

// Grouped sends: every rank to every other, S/p each, all after one step of protocol latency.
void append_all_to_all(ScheduleBuilder& b, const CollectiveRequest& r) {
  const int p = r.ranks;
  const RingSteps s = nccl_ring_steps(Collective::AllToAll, p, node_count(r));
  const std::vector<int> start = b.gate(r.protocol.ring_latency_s(s.steps, s.inter_steps), {});
  const double bytes = r.bytes / p * r.protocol.wire_ratio;
  for (int offset = 1; offset < p; ++offset) {
    for (int src = 0; src < p; ++src) b.transfer(src, (src + offset) % p, bytes, 1, start);
  }
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
  switch (r.kind) {
    case Collective::Reduce: append_nccl_ring_reduce(b, r, {}); break;
    case Collective::Broadcast: append_nccl_ring_broadcast(b, r, {}); break;
    case Collective::AllReduce:
    case Collective::AllGather:
    case Collective::ReduceScatter: append_ring_pipeline(b, r); break;
    case Collective::AllToAll: append_all_to_all(b, r); break;
  }
  Schedule s = b.finish();
  // Every flow starts after the one Delay and carries the same bytes: the flows end when the
  // slowest does, so the replay may evaluate them from link loads (docs/collectives.md,
  // "Lock-step schedules at scale").
  s.lock_step = true;
  return s;
}

}  // namespace gpuscale::coll
