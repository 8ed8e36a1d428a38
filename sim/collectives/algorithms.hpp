// The collective algorithms, one file each (docs/collectives.md gives each one's model, closed
// form and sources). Call them through build_schedule (registry.hpp), which checks the request
// and answers the trivial cases (one rank, zero bytes: no ops); a builder assumes a checked
// request with at least 2 ranks, a positive size and a collective it implements.
#pragma once

#include <string>
#include <vector>

#include "sim/collectives/builder.hpp"
#include "sim/collectives/request.hpp"
#include "sim/collectives/schedule.hpp"

namespace gpuscale::coll {

Schedule build_nccl_ring(const CollectiveRequest& request);          // every collective
Schedule build_nccl_reduce_bcast(const CollectiveRequest& request);  // allreduce
Schedule build_nccl_tree(const CollectiveRequest& request);          // allreduce
Schedule build_nccl_nvls(const CollectiveRequest& request);          // allreduce
Schedule build_nccl_auto(const CollectiveRequest& request);          // allreduce
Schedule build_ring(const CollectiveRequest& request);               // allreduce
Schedule build_recursive_doubling(const CollectiveRequest& request); // allreduce
Schedule build_rabenseifner(const CollectiveRequest& request);       // allreduce
Schedule build_binomial_tree(const CollectiveRequest& request);      // allreduce, reduce, broadcast
Schedule build_hierarchical(const CollectiveRequest& request);       // allreduce
Schedule build_p2p(const CollectiveRequest& request);                // allreduce, reduce, broadcast
Schedule build_aluminum(const CollectiveRequest& request);           // allreduce

// Aluminum as LBANN drives it (aluminum.cpp): the largest allreduce, in bytes, that goes through
// the host-transfer path on `ranks` ranks (0 below 64 ranks), and the registry name of the
// algorithm an allreduce of `bytes` runs: nccl_ring, recursive_doubling or rabenseifner.
double aluminum_host_transfer_max_bytes(int ranks);
std::string aluminum_choice(double bytes, int ranks);

// What nccl_auto runs for a request (nccl_auto.cpp): NCCL's choice from request.nccl. Throws
// ConfigError when the request has no communicator facts.
NcclChoice nccl_auto_choice(const CollectiveRequest& request);

// NCCL's ring reduce to request.root and ring broadcast from it (nccl_ring.cpp), appended to `b`
// after `deps`: the protocol latency, then per channel a pipelined chain along the ring. Return
// the chain flows.
std::vector<int> append_nccl_ring_reduce(ScheduleBuilder& b, const CollectiveRequest& request,
                                         const std::vector<int>& deps);
std::vector<int> append_nccl_ring_broadcast(ScheduleBuilder& b, const CollectiveRequest& request,
                                            const std::vector<int>& deps);

}  // namespace gpuscale::coll
