// The NCCL protocol of each collective of a job: the one named, or for "auto" the one NCCL's own
// cost model picks by message size (coll::choose_nccl_ring_protocol) for a ring collective over
// the job's channels; and what NCCL's tuning reads of the job (coll::NcclComm), which nccl_auto
// chooses its algorithm from and nccl_nvls needs.
//
// The NCCL version whose tables apply follows the GPUs: 2.21.5 on Hopper (compute capability 9.0,
// the NCCL of the NGC PyTorch containers Megatron-Core 0.8 ran in [?]), else 2.7.8, the version
// gpuscale's V100-era studies cite (docs/collectives.md#nccl-algorithm-choice).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/collectives/nccl_tuning.hpp"
#include "sim/collectives/protocol.hpp"
#include "sim/collectives/request.hpp"
#include "topologies/src/routing.hpp"

namespace gpuscale::sim {

// "auto" and the NCCL protocol names (coll::protocol_names).
std::vector<std::string> protocol_choice_names();

class ProtocolChoice {
 public:
  // `protocol`: "auto", "ll", "ll128", "simple" or "ideal". `gpus` are device indices in rank
  // order, `rings` channel rings over ranks (empty: one ring in rank order). The references must
  // outlive this object.
  ProtocolChoice(const topo::Topology& topology, const topo::Router& router,
                 const std::vector<int>& gpus, const std::vector<std::vector<int>>& rings,
                 const std::vector<int>& node_of_rank, std::string protocol);

  // The protocol of an allreduce of `bytes`. Throws ConfigError for an unknown protocol name.
  coll::Protocol for_bytes(double bytes);
  // The protocol of a collective `kind` of `bytes` (request.hpp's size S): for "auto", NCCL's
  // ring model with the collective's own steps, or for all-to-all NCCL's p2p threshold on the
  // S/p each peer receives.
  coll::Protocol for_collective(coll::Collective kind, double bytes);
  // Sets a request's protocol (for its kind and bytes), its NCCL facts and whether nccl_auto
  // may choose the protocol too.
  void fill(coll::CollectiveRequest& request);

  // What NCCL's tuning reads of this job, worked out on first use.
  const coll::NcclComm& nccl_comm();

 private:
  double channel_bandwidth();

  const topo::Topology& topology_;
  const topo::Router& router_;
  const std::vector<int>& gpus_;
  const std::vector<std::vector<int>>& rings_;
  std::string protocol_;
  int nodes_ = 1;
  coll::NcclVersion version_ = coll::NcclVersion::v2_7_8;
  int compute_capability_ = 0;
  double channel_bandwidth_ = 0;  // routed on first use: a fixed protocol never needs it
  std::optional<coll::NcclComm> comm_;
};

}  // namespace gpuscale::sim
