// nccl_auto: the allreduce NCCL would run, by NCCL's own choice (nccl_tuning.hpp): ring, tree
// or NVLS, and with the protocol when the caller leaves it to NCCL, from the request's
// communicator facts (CollectiveRequest::nccl) and NCCL version. The schedule is the chosen
// algorithm's, named nccl_auto (nccl_auto_choice says which ran).
#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/registry.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::coll {

NcclChoice nccl_auto_choice(const CollectiveRequest& r) {
  if (!r.nccl) {
    throw ConfigError({}, "nccl_auto needs what NCCL's tuning reads of the machine (channels, "
                          "their bandwidth, the GPUs' architecture); this caller gives none");
  }
  // A protocol the caller fixed is NCCL_PROTO set to it; "ideal" is weighed as Simple.
  std::vector<NcclProtocol> protocols = {NcclProtocol::LL, NcclProtocol::LL128,
                                         NcclProtocol::Simple};
  if (!r.nccl_chooses_protocol) {
    protocols = {r.protocol.name == "ll"      ? NcclProtocol::LL
                 : r.protocol.name == "ll128" ? NcclProtocol::LL128
                                              : NcclProtocol::Simple};
  }
  return choose_nccl_allreduce(*r.nccl, r.bytes, protocols);
}

Schedule build_nccl_auto(const CollectiveRequest& r) {
  const NcclChoice choice = nccl_auto_choice(r);
  CollectiveRequest chosen = r;
  if (r.nccl_chooses_protocol) {
    chosen.protocol = nccl_protocol(choice.protocol, r.nccl->intra, r.nccl->version);
  }
  Schedule s = find_algorithm(schedule_of(choice.algorithm)).build(chosen);
  s.algorithm = "nccl_auto";
  return s;
}

}  // namespace gpuscale::coll
