// What a collective algorithm is asked to do: which collective, how many bytes, over how many
// ranks, and what it may know of the machine (ring orders, which node each rank lives on, the
// NCCL protocol).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <optional>

#include "sim/collectives/nccl_tuning.hpp"
#include "sim/collectives/protocol.hpp"
#include "workloads/src/collective.hpp"

namespace gpuscale::coll {

// The collectives a workload asks for (workloads/src/collective.hpp), as the algorithms take them.
using wl::Collective;
using wl::to_string;
using wl::all_collectives;
using wl::collective_names;
using wl::collective_by_name;

struct CollectiveRequest {
  Collective kind = Collective::AllReduce;
  // The size S in bytes (>= 0; 0 gives an empty schedule), as nccl-tests' "size" column counts
  // it (nccl_tests.hpp): the buffer of an allreduce, reduce or broadcast; the gathered output of
  // an allgather (S/p from each rank); the input of a reducescatter (each rank keeps S/p); the
  // send buffer of each rank of an alltoall (S/p to each rank, itself included).
  double bytes = 0;
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
  // What NCCL's tuning reads of the machine (nccl_tuning.hpp), for nccl_auto's choice and for
  // nccl_nvls, which runs only where it says NVLS can; absent: neither can run.
  std::optional<NcclComm> nccl;
  // nccl_auto chooses the protocol with the algorithm (NCCL_PROTO unset); false: it keeps
  // `protocol` and chooses the algorithm alone.
  bool nccl_chooses_protocol = false;
};

// The pipeline steps NCCL's cost model charges a collective of `kind` over `ranks` ranks on
// `nodes` nodes, how many of them cross the network (NVIDIA/nccl src/graph/tuning.cc,
// ncclTopoTuneModel: nsteps, nInterSteps), and the share of S each edge carries: allreduce 2(p-1),
// 2(n-1), 2(p-1)/p; allgather, reducescatter p-1, n-1, (p-1)/p; broadcast and reduce p-1, n-1, 1
// (NCCL charges them p, n; gpuscale's chains have p-1 hops and pay p-1, n-1, as protocol.hpp
// says). All-to-all, which NCCL's model leaves out, is one step, over the network when the ranks
// span nodes, and 1/p (nccl_ring.cpp). What nccl_ring's schedules pay, and what
// choose_nccl_ring_protocol weighs.
RingSteps nccl_ring_steps(Collective kind, int ranks, int nodes);

// Throws ConfigError (one line, "collective request: ...") when the request is malformed: ranks
// < 1, bytes negative or not finite, root out of range, a ring that is not a permutation of the
// ranks, node_of_rank of the wrong size or with a negative node.
void check_request(const CollectiveRequest& request);

// The channel rings of a request: its rings, or one ring in rank order.
std::vector<std::vector<int>> channel_rings(const CollectiveRequest& request);

// The ranks of each node, nodes in increasing node id, ranks in increasing order.
std::vector<std::vector<int>> ranks_by_node(const CollectiveRequest& request);

}  // namespace gpuscale::coll
