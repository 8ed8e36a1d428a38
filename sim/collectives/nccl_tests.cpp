#include "sim/collectives/nccl_tests.hpp"

#include <fmt/format.h>

#include "topologies/core/error.hpp"

namespace gpuscale::coll {
namespace {

// Whether nccl-tests splits the count over the ranks (a per-rank count of count/ranks).
bool per_rank_count(Collective kind) {
  return kind == Collective::AllGather || kind == Collective::ReduceScatter ||
         kind == Collective::AllToAll;
}

}  // namespace

// setupArgs (src/common.cu:900-911) divides the size by the element size, asks the test for its
// counts, and TimeTest prints max(sendBytes, expectedBytes) as "size" and paramcount as "count"
// (common.cu:938). AllGatherGetCollByteCount (src/all_gather.cu:10-16), its reduce_scatter.cu
// (10-16) and alltoall.cu (18-21) twins take base = (count/nranks) & ~(16/eltSize - 1); the
// others (all_reduce.cu:34-39, broadcast.cu:10-15, reduce.cu:10-15) keep the count.
NcclTestsShape nccl_tests_shape(Collective kind, std::uint64_t requested_B, int ranks) {
  const std::uint64_t count = requested_B / kNcclTestsElementBytes;
  if (!per_rank_count(kind)) return {count * kNcclTestsElementBytes, count};
  constexpr std::uint64_t kAlignElements = 16 / kNcclTestsElementBytes;
  const auto n = static_cast<std::uint64_t>(ranks);
  const std::uint64_t base = (count / n) & ~(kAlignElements - 1);
  return {base * n * kNcclTestsElementBytes, base};
}

// The *GetBw functions (all_reduce.cu:59-64, all_gather.cu:38-43, reduce_scatter.cu:37-42,
// broadcast.cu:34-39, reduce.cu:36-39, alltoall.cu:48-53) and doc/PERFORMANCE.md:134-143.
double bus_bandwidth_factor(Collective kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case Collective::AllReduce: return 2 * (n - 1) / n;
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll: return (n - 1) / n;
    case Collective::Broadcast:
    case Collective::Reduce: break;
  }
  return 1;
}

const char* bus_bandwidth_formula(Collective kind) {
  switch (kind) {
    case Collective::AllReduce: return "2(n-1)/n";
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll: return "(n-1)/n";
    case Collective::Broadcast:
    case Collective::Reduce: break;
  }
  return "1";
}

// all_gather.cu:87, broadcast.cu:103 and alltoall.cu:393 pass "none" and the reducing tests
// their -o operations; broadcast and reduce pass their root, the others -1.
const char* nccl_tests_redop(Collective kind) {
  const bool reduces = kind == Collective::AllReduce || kind == Collective::ReduceScatter ||
                       kind == Collective::Reduce;
  return reduces ? "sum" : "none";
}

int nccl_tests_root(Collective kind) {
  return kind == Collective::Broadcast || kind == Collective::Reduce ? 0 : -1;
}

// TimeTest (common.cu:936): for (size = minbytes; size <= maxbytes; size *= stepfactor). nccl-tests
// also steps additively (-i) when the factor is 1; gpuscale has only the multiplicative sweep.
std::vector<std::uint64_t> nccl_tests_sizes(std::uint64_t min_B, std::uint64_t max_B,
                                            std::uint64_t factor) {
  if (min_B == 0 || min_B > max_B) {
    throw ConfigError({"-b/--minbytes"}, fmt::format("the sweep's sizes must satisfy 0 < minbytes "
                                                     "<= maxbytes (got {} and {} bytes)",
                                                     min_B, max_B));
  }
  if (factor < 2) {
    throw ConfigError({"-f/--stepfactor"},
                      fmt::format("the step factor must be at least 2 (got {})", factor));
  }
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = min_B;; size *= factor) {
    sizes.push_back(size);
    if (size > max_B / factor) break;  // the next size would pass max (or overflow)
  }
  return sizes;
}

}  // namespace gpuscale::coll
