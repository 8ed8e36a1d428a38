// NCCL's three protocols, as NCCL's own cost model (src/graph/tuning.cc) describes them:
//   time = latency + bytes / algorithm bandwidth
//   ring latency = base + (steps - inter_steps) * intra_hop + inter_steps * inter_hop
//                  (allreduce: steps = 2(p-1), inter_steps = 2(nodes-1);
//                   reduce, broadcast: steps = p-1, inter_steps = nodes-1)
//   tree latency = base + 2 * ((ranks_per_node - 1) * intra_hop + floor(log2 nodes) * inter_hop)
// and what each puts on the wire per payload byte: LL stores 4 data bytes and a 4-byte flag in
// every 8-byte word (2.0), LL128 120 payload bytes per 128-byte line (128/120), Simple 1.0.
//
// Latencies are those of NCCL 2.7.x. Ring over NVLink (base 3.6/10.0/8.4 us, hop 0.47/1.9/3.4 us
// for LL/LL128/Simple) is in the brief (section 7); the PCI, network and tree figures come from
// the same table and are marked [?] in docs/collectives.md, since stored copies of 2.7-era files
// disagree on two of them.
//
// Latencies follow the NCCL version asked for: 2.7.8 by default, or 2.21.5 (nccl_tuning.hpp).
// Only the NCCL algorithms (nccl_*) read the protocol; the MPI family and p2p ignore it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuscale::coll {

enum class NcclProtocol { LL, LL128, Simple };

// The NCCL releases whose tables gpuscale carries (nccl_tuning.hpp).
enum class NcclVersion { v2_7_8, v2_21_5 };

// Which row of NCCL's hop-latency table an intra-node hop uses.
enum class IntraLink { NvLink, Pci };

struct Protocol {
  std::string name = "ideal";
  double wire_ratio = 1.0;  // bytes on the wire per payload byte
  // Seconds. Ring and tree latencies of NCCL's model (see above).
  double ring_base_s = 0, ring_hop_intra_s = 0, ring_hop_inter_s = 0;
  double tree_base_s = 0, tree_hop_intra_s = 0, tree_hop_inter_s = 0;
  // NVLS's latency (NCCL >= 2.17, Simple only; 0 where the version has no NVLS).
  double nvls_s = 0;

  // NCCL's latency of a ring collective of `steps` pipeline steps, `inter_steps` of them over
  // the network.
  double ring_latency_s(int steps, int inter_steps) const;
  // Its hops' part (the latency less the base): what a chunk pays crossing the ring's edges.
  double ring_hops_latency_s(int steps, int inter_steps) const;
  // NCCL's latency of a tree allreduce.
  double tree_latency_s(int ranks_per_node, int nodes) const;
};

// No protocol cost: zero latencies, one wire byte per payload byte. For closed-form checks and
// what-if studies.
Protocol ideal_protocol();
Protocol nccl_protocol(NcclProtocol kind, IntraLink link = IntraLink::NvLink,
                       NcclVersion version = NcclVersion::v2_7_8);
// "ll", "ll128", "simple" or "ideal"; throws ConfigError for another name, with a hint.
Protocol protocol_by_name(std::string_view name, IntraLink link = IntraLink::NvLink,
                          NcclVersion version = NcclVersion::v2_7_8);
const std::vector<std::string>& protocol_names();

// The protocol among `allowed` that minimises NCCL's own time model for a ring allreduce of
// `bytes` over `ranks` ranks (on `nodes` nodes) and `channels` channels of
// `channel_bandwidth_Bps` each:
//   ring_latency(2(p-1), 2(nodes-1)) + 2(p-1)/p * bytes * wire_ratio / (channels * bandwidth).
// This is how NCCL picks a protocol by message size; it omits NCCL's per-architecture bandwidth
// caps (llMaxBw, ll128MaxBwPerCh), so the switch points are approximate (docs/collectives.md).
// Ties go to the earlier entry of `allowed`.
Protocol choose_nccl_protocol(double bytes, int ranks, int nodes, int channels,
                              double channel_bandwidth_Bps,
                              const std::vector<NcclProtocol>& allowed = {NcclProtocol::LL,
                                                                          NcclProtocol::LL128,
                                                                          NcclProtocol::Simple},
                              IntraLink link = IntraLink::NvLink);

// A ring collective in NCCL's model (request.hpp: nccl_ring_steps gives it per collective): its
// pipeline steps, `inter_steps` of them over the network, and the bytes each ring edge carries
// per byte of the collective's size (allreduce 2(p-1)/p, allgather (p-1)/p, broadcast 1).
struct RingSteps {
  int steps = 0;
  int inter_steps = 0;
  double edge_share = 0;
};

// As choose_nccl_protocol, for any ring collective:
//   ring_latency(steps, inter_steps) + edge_share * bytes * wire_ratio / (channels * bandwidth).
Protocol choose_nccl_ring_protocol(
    double bytes, RingSteps steps, int channels, double channel_bandwidth_Bps,
    const std::vector<NcclProtocol>& allowed = {NcclProtocol::LL, NcclProtocol::LL128,
                                                NcclProtocol::Simple},
    IntraLink link = IntraLink::NvLink, NcclVersion version = NcclVersion::v2_7_8);

// NCCL's protocol for a point-to-point send of `bytes` (all-to-all is one per peer): LL up to
// NCCL_P2P_LL_THRESHOLD (16384 bytes by default, NVIDIA/nccl src/enqueue.cc), else Simple.
Protocol choose_nccl_p2p_protocol(double bytes, IntraLink link = IntraLink::NvLink,
                                  NcclVersion version = NcclVersion::v2_7_8);

}  // namespace gpuscale::coll
