// nccl-tests' conventions (NVIDIA/nccl-tests 2.19.6, src/*.cu and doc/PERFORMANCE.md), so that a
// simulated collective reads as the line nccl-tests would print for it on the real machine:
//  - a requested size becomes a count of elements and a "size" column by the test's own rounding
//    (nccl_tests_shape);
//  - algbw = size / time for every collective; busbw = algbw x a factor per collective that makes
//    it comparable with one link's bandwidth whatever the rank count (bus_bandwidth_factor);
//  - `-b MIN -e MAX -f F` sweeps MIN, MIN*F, ... up to MAX (nccl_tests_sizes).
// gpuscale simulates one data type, float (4 bytes), and for reducing collectives the sum.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/collectives/request.hpp"

namespace gpuscale::coll {

inline constexpr int kNcclTestsElementBytes = 4;  // float, nccl-tests' default type (-d float)
inline constexpr const char* kNcclTestsType = "float";

struct NcclTestsShape {
  std::uint64_t size_B = 0;  // the "size" column: max(send bytes, receive bytes) of one rank
  std::uint64_t count = 0;   // the "count" column: elements per rank, or per peer for alltoall
};

// What nccl-tests runs for a requested size of `requested_B` bytes on `ranks` ranks: count =
// requested / 4 elements, then for allgather, reducescatter and alltoall a per-rank count of
// count/ranks rounded down to a multiple of 16 bytes' worth of elements, so that their size is a
// multiple of 16 x ranks bytes (and 0 below that).
NcclTestsShape nccl_tests_shape(Collective kind, std::uint64_t requested_B, int ranks);

// busbw / algbw: allreduce 2(n-1)/n; allgather, reducescatter, alltoall (n-1)/n; broadcast,
// reduce 1 (doc/PERFORMANCE.md, "Summary").
double bus_bandwidth_factor(Collective kind, int ranks);
// The same factor as nccl-tests' documentation writes it: "2(n-1)/n", "(n-1)/n" or "1".
const char* bus_bandwidth_formula(Collective kind);

// The "redop" column: "sum" for the reducing collectives (nccl-tests' default -o sum), else
// "none".
const char* nccl_tests_redop(Collective kind);
// The "root" column: 0 for reduce and broadcast (nccl-tests' default -r 0), else -1.
int nccl_tests_root(Collective kind);

// The sizes of `-b min -e max -f factor`: min, min*factor, ... while <= max (common.cu, TimeTest).
// Throws ConfigError when min is 0, min > max or factor < 2.
std::vector<std::uint64_t> nccl_tests_sizes(std::uint64_t min_B, std::uint64_t max_B,
                                            std::uint64_t factor);

}  // namespace gpuscale::coll
