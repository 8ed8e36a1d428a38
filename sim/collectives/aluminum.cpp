// aluminum: LLNL's Aluminum library as LBANN drove it on Sierra and Lassen (Dryden et al.,
// "Aluminum: An Asynchronous, GPU-Aware Communication Library Optimized for Large-Scale Training
// of Deep Neural Networks on HPC Systems", MLHPC 2018): per allreduce, NCCL's ring for large
// buffers, a latency-optimal MPI allreduce for small ones at scale.
//
// Aluminum itself chooses nothing between the two: its NCCL backend always calls ncclAllReduce
// (LLNL/Aluminum v0.2, src/nccl_impl.hpp:360), a ring in the NCCL 2.3 of 2018. The switch is
// LBANN's, by the buffer's element count n and the communicator's size p, "Tuned for Sierra"
// (LLNL/lbann v0.97, src/comm.cpp:168-173, commit 88f0665 of 2018-11-19, "Update MPI-CUDA
// host-transfer tuning for Sierra/Lassen"): Aluminum's MPI-CUDA host-transfer allreduce when
//   (p >= 64 and n <= 4096) or (p >= 128 and n <= 8192) or (p >= 256 and n <= 32768)
//   or (p >= 512 and n <= 65536) or (p >= 2048 and n <= 262144),
// else NCCL. n counts LBANN's DataType, float (v0.97 CMakeLists.txt:135): 4 bytes an element.
// The host-transfer allreduce copies the buffer to host memory and runs Aluminum's own MPI
// allreduce on it: recursive doubling up to 512 elements, Rabenseifner above (LLNL/Aluminum v0.2,
// src/mpi_cuda/allreduce.hpp:74-79), both folding non-powers of two as MPICH does.
//
// So T is nccl_ring's below 64 ranks and above the threshold, recursive_doubling's or
// rabenseifner's under it. Not modelled: the copies to and from host memory, the reduction on
// the CPU (the schedules reduce on the GPU), the progress engine's polling, and that LBANN could
// run a host-transfer allreduce and an NCCL one at once (docs/collectives.md).
#include <array>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/registry.hpp"

namespace gpuscale::coll {
namespace {

constexpr double kLbannElementBytes = 4;

struct HostTransferRow {
  int min_ranks;
  double max_elements;
};
constexpr std::array<HostTransferRow, 5> kHostTransferRule = {
    {{64, 4096}, {128, 8192}, {256, 32768}, {512, 65536}, {2048, 262144}}};

constexpr double kRecursiveDoublingMaxElements = 1 << 9;

}  // namespace

double aluminum_host_transfer_max_bytes(int ranks) {
  double max_elements = 0;
  for (const HostTransferRow& row : kHostTransferRule) {
    if (ranks >= row.min_ranks) max_elements = row.max_elements;
  }
  return max_elements * kLbannElementBytes;
}

std::string aluminum_choice(double bytes, int ranks) {
  if (bytes > aluminum_host_transfer_max_bytes(ranks)) return "nccl_ring";
  return bytes <= kRecursiveDoublingMaxElements * kLbannElementBytes ? "recursive_doubling"
                                                                     : "rabenseifner";
}

Schedule build_aluminum(const CollectiveRequest& r) {
  Schedule s = find_algorithm(aluminum_choice(r.bytes, r.ranks)).build(r);
  s.algorithm = "aluminum";
  return s;
}

}  // namespace gpuscale::coll
