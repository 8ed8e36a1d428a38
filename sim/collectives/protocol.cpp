#include "sim/collectives/protocol.hpp"

#include <cmath>
#include <stdexcept>

#include "topologies/core/config_reader.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::coll {
namespace {

constexpr double us = 1e-6;

struct Figures {
  double ring_base, tree_base;
  double ring_hop_nvlink, ring_hop_pci, ring_hop_net;
  double tree_hop_nvlink, tree_hop_pci, tree_hop_net;
  double wire_ratio;
};

// src/graph/tuning.cc's baseLat[algo][proto] and hwLat[NVLINK|PCI|NET][algo][proto], ring and
// tree rows: NVIDIA/nccl v2.7.8-1 lines 54-68, v2.21.5-1 lines 56-78.
Figures figures(NcclProtocol kind, NcclVersion version) {
  const bool v2_21 = version == NcclVersion::v2_21_5;
  switch (kind) {
    case NcclProtocol::LL:
      return v2_21 ? Figures{6.6, 6.8, 0.6, 1.0, 2.7, 0.6, 1.0, 5.0, 2.0}
                   : Figures{3.6, 4.4, 0.47, 1.0, 2.7, 0.52, 1.0, 5.0, 2.0};
    case NcclProtocol::LL128:
      return v2_21 ? Figures{14.0, 14.0, 1.9, 2.5, 4.0, 1.25, 1.9, 8.5, 128.0 / 120.0}
                   : Figures{10.0, 4.4, 1.9, 2.5, 4.0, 1.2, 1.9, 8.5, 128.0 / 120.0};
    case NcclProtocol::Simple:
      return v2_21 ? Figures{8.4, 0.0, 3.4, 5.7, 14.0, 28.0, 28.0, 28.0, 1.0}
                   : Figures{8.4, 0.0, 3.4, 5.7, 9.6, 28.0, 28.0, 50.0, 1.0};
  }
  throw std::logic_error("nccl_protocol: unknown protocol");
}

const char* name_of(NcclProtocol kind) {
  switch (kind) {
    case NcclProtocol::LL: return "ll";
    case NcclProtocol::LL128: return "ll128";
    case NcclProtocol::Simple: return "simple";
  }
  return "?";
}

int floor_log2(int n) {  // 0 for n <= 1
  int k = 0;
  while ((2L << k) <= n) ++k;
  return k;
}

}  // namespace

double Protocol::ring_latency_s(int steps, int inter_steps) const {
  return ring_base_s + ring_hops_latency_s(steps, inter_steps);
}

double Protocol::ring_hops_latency_s(int steps, int inter_steps) const {
  return (steps - inter_steps) * ring_hop_intra_s + inter_steps * ring_hop_inter_s;
}

double Protocol::tree_latency_s(int ranks_per_node, int nodes) const {
  return tree_base_s +
         2 * ((ranks_per_node - 1) * tree_hop_intra_s + floor_log2(nodes) * tree_hop_inter_s);
}

Protocol ideal_protocol() { return Protocol{}; }

Protocol nccl_protocol(NcclProtocol kind, IntraLink link, NcclVersion version) {
  const Figures f = figures(kind, version);
  const bool nvlink = link == IntraLink::NvLink;
  Protocol p;
  p.name = name_of(kind);
  p.wire_ratio = f.wire_ratio;
  p.ring_base_s = f.ring_base * us;
  p.ring_hop_intra_s = (nvlink ? f.ring_hop_nvlink : f.ring_hop_pci) * us;
  p.ring_hop_inter_s = f.ring_hop_net * us;
  p.tree_base_s = f.tree_base * us;
  p.tree_hop_intra_s = (nvlink ? f.tree_hop_nvlink : f.tree_hop_pci) * us;
  p.tree_hop_inter_s = f.tree_hop_net * us;
  // hwLat[NVLINK][NVLS][Simple], baseLat 0 (v2.21.5-1 tuning.cc lines 59, 69).
  if (kind == NcclProtocol::Simple && version == NcclVersion::v2_21_5) p.nvls_s = 25 * us;
  return p;
}

const std::vector<std::string>& protocol_names() {
  static const std::vector<std::string> names = {"ll", "ll128", "simple", "ideal"};
  return names;
}

Protocol protocol_by_name(std::string_view name, IntraLink link, NcclVersion version) {
  if (name == "ll") return nccl_protocol(NcclProtocol::LL, link, version);
  if (name == "ll128") return nccl_protocol(NcclProtocol::LL128, link, version);
  if (name == "simple") return nccl_protocol(NcclProtocol::Simple, link, version);
  if (name == "ideal") return ideal_protocol();
  throw ConfigError({}, unknown_name_message("NCCL protocol", name, protocol_names()));
}

Protocol choose_nccl_protocol(double bytes, int ranks, int nodes, int channels,
                              double channel_bandwidth_Bps,
                              const std::vector<NcclProtocol>& allowed, IntraLink link) {
  if (nodes < 1) throw std::invalid_argument("choose_nccl_protocol: nodes must be > 0");
  if (ranks < 1) throw std::invalid_argument("choose_nccl_protocol: ranks must be > 0");
  const RingSteps steps{2 * (ranks - 1), 2 * (nodes - 1), 2.0 * (ranks - 1) / ranks};
  return choose_nccl_ring_protocol(bytes, steps, channels, channel_bandwidth_Bps, allowed, link);
}

Protocol choose_nccl_ring_protocol(double bytes, RingSteps steps, int channels,
                                   double channel_bandwidth_Bps,
                                   const std::vector<NcclProtocol>& allowed, IntraLink link,
                                   NcclVersion version) {
  if (allowed.empty()) throw std::invalid_argument("choose_nccl_protocol: no protocol allowed");
  if (channels < 1 || !(channel_bandwidth_Bps > 0)) {
    throw std::invalid_argument("choose_nccl_protocol: channels and bandwidth must be > 0");
  }
  Protocol best;
  double best_time = INFINITY;
  for (NcclProtocol kind : allowed) {
    const Protocol p = nccl_protocol(kind, link, version);
    const double time = p.ring_latency_s(steps.steps, steps.inter_steps) +
                        steps.edge_share * bytes * p.wire_ratio /
                            (channels * channel_bandwidth_Bps);
    if (time < best_time) {
      best_time = time;
      best = p;
    }
  }
  return best;
}

Protocol choose_nccl_p2p_protocol(double bytes, IntraLink link, NcclVersion version) {
  constexpr double kP2pLLThreshold = 16384;  // bytes; NCCL_P2P_LL_THRESHOLD's default
  return nccl_protocol(bytes <= kP2pLLThreshold ? NcclProtocol::LL : NcclProtocol::Simple, link,
                       version);
}

}  // namespace gpuscale::coll
