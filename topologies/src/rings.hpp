// Ring discovery in the manner of NCCL's channel search (src/graph/search.cc): rings are directed
// Hamiltonian cycles over one node's GPUs in which every hop is an NVLink, each ring taking one
// lane of every link in its direction of travel. gpuscale enumerates the cycles (links with more
// lanes first, then lower GPU index) and packs as many rings as the lanes allow, up to
// `max_rings` (NCCL's MAXCHANNELS is 32): on a DGX-1V that is 6 rings, every NVLink lane used
// once in each direction. Deterministic: the same machine gives the same rings in the same order.
//
// Where NVLinks close no ring (PCIe-only machines, Sierra's two NVLink islands), one ring in
// declaration order is used; its hops follow the routes of the chosen routing mode. In a cluster
// each node's ring is opened into a chain and the chains are joined node after node, as NCCL
// joins its intra-node chains through the network. A job over several nodes of such a machine
// takes one ring per NIC it can leave through: NCCL 2.3's netGetRings gives every inter-node ring
// a NIC of its own (`cardUsed`, src/transport/net.cu:131-175 at v2.3.7-1), so a node with two
// NICs runs two rings, one through each. gpuscale adds the reversed order, whose chain leaves the
// node from its other end, where that end's nearest NIC is another rail's (`router`).
// On an NVSwitch node (every GPU linked to an NVSwitch: DGX-2, DGX A100, DGX H100) any order is a
// ring through the switch; gpuscale takes the rotations of the declaration order, each opened at
// another GPU: across nodes one per rail the chain leaves through (NCCL gives every NIC a channel
// of its own, as above; on rail-optimised clusters each channel stays on its rail [?]), on one node
// one per GPU (the same edges: the link loads are one ring's, split in channels as NCCL splits
// its own).
#pragma once

#include <vector>

#include "topologies/src/routing.hpp"
#include "topologies/src/topology.hpp"

namespace gpuscale::topo {

struct RingSet {
  std::vector<std::vector<int>> rings;  // GPU device indices, in ring order
  bool over_nvlink = false;             // every intra-node hop is one NVLink
};

// Rings over the first `gpus_per_node` GPUs of each of the first `nodes` nodes (0: all), the
// GPUs a job of fewer GPUs than the machine holds runs on. `router`, if given, picks the NIC each
// chain leaves its node through (one ring per NIC where NVLinks close no ring, above).
RingSet find_rings(const Topology& topology, int max_rings = 32, int gpus_per_node = 0,
                   int nodes = 0, const Router* router = nullptr);

}  // namespace gpuscale::topo
