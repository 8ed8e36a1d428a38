// NCCL's choice of algorithm and protocol for an allreduce, as NCCL's own cost model makes it:
// ncclTopoTuneModel fills a table of latency and algorithm bandwidth per (algorithm, protocol)
// from the communicator's ranks, nodes, channels and per-channel bandwidths; ncclTopoGetAlgoTime
// gives each a time, latency + bytes / bandwidth (with per-size tree corrections and the ring's
// plateau); the least time wins (getAlgoInfo). Two versions, each followed line by line:
//
//   2.7.8   NVIDIA/nccl v2.7.8-1, src/graph/tuning.cc lines 54-264, src/enqueue.cc 253-275.
//           Ring and Tree (CollNet needs a SHARP network, which no topology here has).
//   2.21.5  NVIDIA/nccl v2.21.5-1, src/graph/tuning.cc lines 54-440, src/enqueue.cc 1484-1540.
//           Ring, Tree and NVLS (NVLink SHARP: the NVSwitch reduces, Hopper and later, one
//           node: NCCL disables NVLS across nodes without CollNet, tuning.cc line 298).
//           NVLS_TREE (NVLS in the node, a tree across nodes) is not modelled: the choice across
//           nodes is among Ring and Tree, where NCCL 2.21 would also weigh NVLS_TREE
//           (docs/collectives.md#nccl-algorithm-choice).
//
// What the model reads of the machine (NcclComm) is what NCCL's topology search finds: channels
// and the bandwidth each gets inside a node and across nodes. gpuscale takes them from the
// channel rings it lays out (protocol_choice.hpp): a channel's bandwidth is the narrowest share
// of a link among the channels crossing it. NCCL searches tree graphs apart from ring graphs;
// gpuscale gives the tree the rings' channels and bandwidths.
#pragma once

#include <vector>

#include "sim/collectives/protocol.hpp"

namespace gpuscale::coll {

enum class NcclAlgorithm { Ring, Tree, Nvls };

const char* to_string(NcclVersion version);     // "2.7.8"
const char* to_string(NcclAlgorithm algorithm); // "ring", "tree", "nvls"
// The gpuscale schedule that runs `algorithm`: nccl_ring, nccl_tree, nccl_nvls.
const char* schedule_of(NcclAlgorithm algorithm);

// What NCCL's tuning reads of a communicator.
struct NcclComm {
  NcclVersion version = NcclVersion::v2_7_8;
  int ranks = 1;
  int nodes = 1;
  int channels = 1;
  // Per channel, GB/s: NCCL's bwIntra and bwInter, one figure here. NCCL's search gives a graph
  // that leaves the node the NIC's speed in both; inside one node, the NVLink or PCI speed.
  double channel_bw_GBps = 0;
  // The GPUs' compute capability, major * 10 + minor (70: V100); 0 when unknown, which NCCL
  // treats as no known architecture (LL128 off).
  int compute_capability = 0;
  IntraLink intra = IntraLink::NvLink;
  // The x86 vendor of the hosts, for NCCL 2.21's LL bandwidth cap and network overhead.
  bool amd_cpu = false;
  // NVLS's bus bandwidth, GB/s: a GPU's NVLink bandwidth to the NVSwitch that reduces (NVLink
  // SHARP: third-generation NVSwitch, Hopper or later GPUs); 0 where NCCL has no nvlsSupport.
  double nvls_bus_bw_GBps = 0;
};

struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::Ring;
  NcclProtocol protocol = NcclProtocol::Simple;
  double seconds = 0;  // the model's time for it
};

// NCCL's model time of an allreduce of `bytes` by `algorithm` and `protocol`; negative when
// NCCL disables the pair (bandwidth 0: LL128 off, NVLS unsupported or across nodes).
double nccl_model_allreduce_s(const NcclComm& comm, NcclAlgorithm algorithm,
                              NcclProtocol protocol, double bytes);

// The pair of least model time among `protocols` (NCCL_PROTO) and the version's algorithms,
// weighed in NCCL's order (tree, ring, nvls; then LL, LL128, Simple): ties go to the earlier, as
// NCCL's strict '<' does. Throws
// std::invalid_argument for an empty communicator or when every pair is disabled.
NcclChoice choose_nccl_allreduce(const NcclComm& comm, double bytes,
                                 const std::vector<NcclProtocol>& protocols = {
                                     NcclProtocol::LL, NcclProtocol::LL128,
                                     NcclProtocol::Simple});

}  // namespace gpuscale::coll
