// nccl_reduce_bcast: MXNet's kvstore=nccl (src/kvstore/kvstore_nccl.h, brief section 7): per key,
// ncclReduce to the root (GPU 0), then ncclBcast from it, one after the other on the same
// stream. Each is NCCL's pipelined ring chain (nccl_ring.cpp), so, on C contention-free channels:
//   T = 2 [base + (p-1 - (n-1)) hop_intra + (n-1) hop_inter] + 2 (p-1) alpha
//       + 2 S wire_ratio / (C B)
// Against nccl_ring's allreduce the bandwidth term is 2S/B instead of 2(p-1)/p S/B: every byte
// crosses every edge twice, not 2(p-1)/p times. O(C p) ops. Lock-step as each chain is: the
// broadcast's Delay waits for every flow of the reduce.
#include "sim/collectives/algorithms.hpp"

namespace gpuscale::coll {

Schedule build_nccl_reduce_bcast(const CollectiveRequest& r) {
  ScheduleBuilder b("nccl_reduce_bcast", r);
  const std::vector<int> reduced = append_nccl_ring_reduce(b, r, {});
  append_nccl_ring_broadcast(b, r, reduced);
  Schedule s = b.finish();
  s.lock_step = true;
  return s;
}

}  // namespace gpuscale::coll
