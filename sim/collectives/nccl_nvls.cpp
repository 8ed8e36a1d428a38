// nccl_nvls: NCCL's NVLS allreduce (NCCL >= 2.17; NVLink SHARP, third-generation NVSwitch with
// Hopper GPUs), flow-level.
//
// Each GPU owns 1/p of the buffer. For its slice, multimem.ld_reduce has the switch read the
// slice from every GPU and return the sum; multimem.st has the switch write the sum to every GPU
// (NVIDIA/nccl v2.21.5-1, src/device/all_reduce.h, runRing's NVLS counterpart
// ncclFunction_AllReduce_NVLS_SIMPLE). A GPU's link to the switch so carries S/p of each of the
// p slices out (the reads) plus its own slice's store, S (1 + 1/p), and as much in (its slice's
// sum, and every slice's stored sum). The switch reduces; no GPU runs a reduction kernel.
//
// A flow cannot end at a switch, so the schedule puts the same bytes on the same links as flows
// between GPUs: rank ring[k] sends S (1 + 1/p) to ring[k + 1] along channel ring 0 (through the
// switch on an NVSwitch machine), which loads every GPU's link to the switch with S (1 + 1/p) each
// way, as NVLS does, and uses only rank pairs nccl_ring uses. One Delay first: NCCL's NVLS
// latency (Protocol::nvls_s). Without contention:
//   T = nvls_latency + route latency + S (1 + 1/p) / B
// with B a GPU's bandwidth to the switch. The switch's own reduction rate is not modelled.
//
// It runs where NCCL's nvlsSupport holds (CollectiveRequest::nccl, nccl_tuning.hpp: a reducing
// NVSwitch, Hopper or later, one node); elsewhere its flows would cross other links than NVLS
// uses, so the request is refused.
#include <fmt/format.h>

#include "sim/collectives/algorithms.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::coll {

Schedule build_nccl_nvls(const CollectiveRequest& r) {
  if (!r.nccl || r.nccl->nvls_bus_bw_GBps <= 0 || r.nccl->nodes > 1) {
    throw ConfigError({}, "nccl_nvls needs GPUs of one node that share an NVSwitch which "
                          "reduces (NVLink SHARP: Hopper or later GPUs on a third-generation "
                          "NVSwitch); use --comm nccl or nccl_auto on this machine");
  }
  ScheduleBuilder b("nccl_nvls", r);
  const std::vector<int> start = b.gate(r.protocol.nvls_s, {});
  const std::vector<int> ring = channel_rings(r).front();
  const double bytes = r.bytes * (1.0 + 1.0 / r.ranks) * r.protocol.wire_ratio;
  for (std::size_t k = 0; k < ring.size(); ++k) {
    b.transfer(ring[k], ring[(k + 1) % ring.size()], bytes, 1, start);
  }
  Schedule s = b.finish();
  s.lock_step = true;  // one Delay, then equal flows that end when the slowest does
  return s;
}

}  // namespace gpuscale::coll
