// What a collective algorithm is asked to do: which collective, how many bytes, over how many
// ranks, and what it may know of the machine (ring orders, which node each rank lives on, the
// NCCL protocol).
#pragma once

#include <string>
#include <vector>

#include "sim/collectives/protocol.hpp"

namespace gpuscale::coll {

enum class Collective { AllReduce, Reduce, Broadcast };
const char* to_string(Collective kind);  // "allreduce", "reduce", "broadcast"

struct CollectiveRequest {
  Collective kind = Collective::AllReduce;
  double bytes = 0;  // the message size S per rank, in bytes (>= 0; 0 gives an empty schedule)
  int ranks = 1;
  int root = 0;      // reduce/broadcast root; the reducing rank of p2p and nccl_reduce_bcast
  // Channel ring orders over ranks (NCCL channels, as topo::find_rings gives them); each a
  // permutation of 0..ranks-1. Empty = one channel in rank order. Only nccl_* algorithms read
  // them: MPI libraries do not know the machine and use rank order.
  std::vector<std::vector<int>> rings;
  // The node of each rank, for multi-node algorithms (nccl_tree, hierarchical; nccl_* latency).
  // Empty = all ranks on one node.
  std::vector<int> node_of_rank;
  Protocol protocol = nccl_protocol(NcclProtocol::Simple);
};

// Throws ConfigError (one line, "collective request: ...") when the request is malformed: ranks
// < 1, bytes negative or not finite, root out of range, a ring that is not a permutation of the
// ranks, node_of_rank of the wrong size or with a negative node.
void check_request(const CollectiveRequest& request);

// The channel rings of a request: its rings, or one ring in rank order.
std::vector<std::vector<int>> channel_rings(const CollectiveRequest& request);

// The ranks of each node, nodes in increasing node id, ranks in increasing order.
std::vector<std::vector<int>> ranks_by_node(const CollectiveRequest& request);

}  // namespace gpuscale::coll
