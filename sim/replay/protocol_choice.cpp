#include "sim/replay/protocol_choice.hpp"

#include <algorithm>
#include <utility>

namespace gpuscale::sim {

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
  if (!node_of_rank.empty()) nodes_ = *std::max_element(node_of_rank.begin(), node_of_rank.end()) + 1;
}

coll::Protocol ProtocolChoice::for_bytes(double bytes) {
  return for_collective(coll::Collective::AllReduce, bytes);
}

coll::Protocol ProtocolChoice::for_collective(coll::Collective kind, double bytes) {
  if (protocol_ != "auto") return coll::protocol_by_name(protocol_);
  const int ranks = static_cast<int>(gpus_.size());
  if (kind == coll::Collective::AllToAll) return coll::choose_nccl_p2p_protocol(bytes / ranks);
  const int channels = std::max<int>(1, static_cast<int>(rings_.size()));
  return coll::choose_nccl_ring_protocol(bytes, coll::nccl_ring_steps(kind, ranks, nodes_),
                                         channels, channel_bandwidth());
}

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

}  // namespace gpuscale::sim
