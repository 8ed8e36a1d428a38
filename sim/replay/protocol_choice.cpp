#include "sim/replay/protocol_choice.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "sim/compute/gpu_spec.hpp"

namespace gpuscale::sim {
namespace {

// A leg that crosses a PCIe link: between GPUs of one node, NCCL then times hops with its PCI
// row (typeIntra).
bool crosses_pcie(const topo::Topology& t, const topo::Leg& leg) {
  for (const topo::Hop& hop : leg.hops) {
    if (t.links()[static_cast<size_t>(hop.link)].kind == topo::LinkKind::Pcie) return true;
  }
  return false;
}

bool has_amd_cpu(const topo::Topology& t) {
  for (const topo::Device& d : t.devices()) {
    if (d.kind == topo::DeviceKind::Cpu &&
        (d.model.find("AMD") != std::string::npos || d.model.find("EPYC") != std::string::npos)) {
      return true;
    }
  }
  return false;
}

// The compute capability of a GPU model's shipped spec, read once per model; 0 for a model
// without one (NCCL's unknown architecture).
int compute_capability_of(const std::string& model) {
  static std::map<std::string, int> known;
  const std::string key = compute::gpu_model_key(model);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  const std::vector<std::string> shipped = compute::shipped_gpus().names();
  const bool has_spec = std::find(shipped.begin(), shipped.end(), key) != shipped.end();
  return known[key] = has_spec ? compute::load_gpu_spec(model).compute_capability : 0;
}

}  // namespace

std::vector<std::string> protocol_choice_names() {
  std::vector<std::string> names = {"auto"};
  for (const std::string& name : coll::protocol_names()) names.push_back(name);
  return names;
}

ProtocolChoice::ProtocolChoice(const topo::Topology& topology, const topo::Router& router,
                               const std::vector<int>& gpus,
                               const std::vector<std::vector<int>>& rings,
                               const std::vector<int>& node_of_rank, std::string protocol)
    : topology_(topology), router_(router), gpus_(gpus), rings_(rings),
      protocol_(std::move(protocol)) {
  // Distinct nodes: a group's ranks may live on nodes 3 and 4 only.
  nodes_ = std::max<int>(1, static_cast<int>(std::set<int>(node_of_rank.begin(),
                                                           node_of_rank.end()).size()));
  if (!gpus_.empty()) {
    compute_capability_ =
        compute_capability_of(topology_.devices()[static_cast<size_t>(gpus_[0])].model);
  }
  if (compute_capability_ >= 90) version_ = coll::NcclVersion::v2_21_5;
}

coll::Protocol ProtocolChoice::for_bytes(double bytes) {
  return for_collective(coll::Collective::AllReduce, bytes);
}

coll::Protocol ProtocolChoice::for_collective(coll::Collective kind, double bytes) {
  // NCCL's NVLink rows throughout, as before nccl_auto: NcclComm::intra says where PCI applies.
  constexpr coll::IntraLink kNvLink = coll::IntraLink::NvLink;
  if (protocol_ != "auto") return coll::protocol_by_name(protocol_, kNvLink, version_);
  const int ranks = static_cast<int>(gpus_.size());
  if (kind == coll::Collective::AllToAll) {
    return coll::choose_nccl_p2p_protocol(bytes / ranks, kNvLink, version_);
  }
  const int channels = std::max<int>(1, static_cast<int>(rings_.size()));
  return coll::choose_nccl_ring_protocol(
      bytes, coll::nccl_ring_steps(kind, ranks, nodes_), channels, channel_bandwidth(),
      {coll::NcclProtocol::LL, coll::NcclProtocol::LL128, coll::NcclProtocol::Simple}, kNvLink,
      version_);
}

void ProtocolChoice::fill(coll::CollectiveRequest& request) {
  request.protocol = for_collective(request.kind, request.bytes);
  request.nccl_chooses_protocol = protocol_ == "auto";
  if (gpus_.size() > 1) request.nccl = nccl_comm();
}

// The first ring's narrowest leg: what one channel of a ring collective gets.
double ProtocolChoice::channel_bandwidth() {
  if (channel_bandwidth_ > 0) return channel_bandwidth_;
  const int ranks = static_cast<int>(gpus_.size());
  const std::vector<int> ring = rings_.empty() ? std::vector<int>{0, ranks > 1 ? 1 : 0} : rings_[0];
  channel_bandwidth_ = 1e30;
  for (size_t i = 0; i + 1 < ring.size(); ++i) {
    const topo::Route r = router_.route(gpus_[static_cast<size_t>(ring[i])],
                                        gpus_[static_cast<size_t>(ring[i + 1])]);
    for (const topo::Leg& leg : r.legs) {
      channel_bandwidth_ = std::min(channel_bandwidth_, leg.bandwidth(topology_).value);
    }
  }
  return channel_bandwidth_;
}

// NCCL's bandwidth per channel is what its topology search leaves each channel of the links
// they share: here the narrowest link's bandwidth over the channels crossing it (in one
// direction), over the ring edges that leave the first two nodes (every node's rings are alike).
const coll::NcclComm& ProtocolChoice::nccl_comm() {
  if (comm_) return *comm_;
  const int ranks = static_cast<int>(gpus_.size());
  std::vector<std::vector<int>> rings = rings_;
  if (rings.empty()) {  // one channel in rank order
    rings.emplace_back(static_cast<size_t>(ranks));
    std::iota(rings[0].begin(), rings[0].end(), 0);
  }
  std::set<int> first_nodes;  // the devices' nodes of the first two nodes the ranks live on
  for (int gpu : gpus_) {
    if (first_nodes.size() == 2) break;
    first_nodes.insert(topology_.devices()[static_cast<size_t>(gpu)].node);
  }
  std::map<std::pair<int, bool>, int> channels_on;  // (link, forward) -> channels crossing it
  bool pcie = false;
  for (const std::vector<int>& ring : rings) {
    for (size_t i = 0; i < ring.size(); ++i) {
      const int from = gpus_[static_cast<size_t>(ring[i])];
      if (!first_nodes.contains(topology_.devices()[static_cast<size_t>(from)].node)) continue;
      const int to = gpus_[static_cast<size_t>(ring[(i + 1) % ring.size()])];
      if (from == to) continue;
      const bool same_node = topology_.devices()[static_cast<size_t>(from)].node ==
                             topology_.devices()[static_cast<size_t>(to)].node;
      for (const topo::Leg& leg : router_.route(from, to).legs) {
        pcie = pcie || (same_node && crosses_pcie(topology_, leg));
        for (const topo::Hop& hop : leg.hops) ++channels_on[{hop.link, hop.forward}];
      }
    }
  }
  double share = channels_on.empty() ? 0 : 1e30;
  for (const auto& [link, channels] : channels_on) {
    const topo::Link& l = topology_.links()[static_cast<size_t>(link.first)];
    share = std::min(share, l.effective_bandwidth().value / channels);
  }
  coll::NcclComm c;
  c.version = version_;
  c.ranks = ranks;
  c.nodes = nodes_;
  c.channels = static_cast<int>(rings.size());
  c.channel_bw_GBps = share / 1e9;
  c.compute_capability = compute_capability_;
  c.intra = pcie ? coll::IntraLink::Pci : coll::IntraLink::NvLink;
  c.amd_cpu = has_amd_cpu(topology_);
  // NVLS needs a reducing NVSwitch: the third generation, which only Hopper and later GPUs are
  // built with (DGX-2's and DGX A100's NVSwitches do not reduce).
  if (compute_capability_ >= 90 && !gpus_.empty()) {
    c.nvls_bus_bw_GBps = topology_.nvswitch_bandwidth(gpus_[0]) / 1e9;
  }
  comm_ = c;
  return *comm_;
}

}  // namespace gpuscale::sim
