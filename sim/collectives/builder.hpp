// Building blocks shared by the algorithms: a schedule under construction, and the patterns
// several algorithms reuse (binomial trees, the MPI ring, pipelined chains).
#pragma once

#include <string>
#include <vector>

#include "sim/collectives/request.hpp"
#include "sim/collectives/schedule.hpp"

namespace gpuscale::coll {

// A two-input sum (MPI_SUM, NCCL's reduction) reads two buffers and writes one: its memory
// traffic is 3 bytes per reduced byte.
constexpr double kSumTrafficPerByte = 3.0;

// Appends ops in the order they are created, which keeps them topologically ordered as long as
// deps name ops already added. Deps are normalised (sorted, duplicates and -1 dropped) so that the
// same algorithm always gives identical schedules.
class ScheduleBuilder {
 public:
  ScheduleBuilder(std::string algorithm, const CollectiveRequest& request);

  // `pipeline` >= 0 marks the flows of one pipeline (Op::pipeline).
  int transfer(int src, int dst, double bytes, int latency_steps, std::vector<int> deps,
               int pipeline = -1);
  int reduce(int rank, double bytes, std::vector<int> deps);
  int delay(double seconds, std::vector<int> deps);
  // A Delay of `seconds` when positive, else -1 (no op): for latencies that may be zero and that
  // nothing needs to join on.
  int optional_delay(double seconds, std::vector<int> deps);
  // What ops that must wait `seconds` after all of `deps` should depend on: one Delay when
  // seconds > 0 or when there is more than one dep (a join, so that n ops waiting on m ops take
  // n + m deps, not n * m), else `deps` itself.
  std::vector<int> gate(double seconds, std::vector<int> deps);

  // An id for the flows of one more pipeline (Op::pipeline), unique in the schedule, whose steps
  // a Delay of the schedule already pays `paid_step_latency_s` each
  // (Schedule::pipeline_step_latency_s).
  int new_pipeline(double paid_step_latency_s = 0) {
    schedule_.pipeline_step_latency_s.push_back(paid_step_latency_s);
    return static_cast<int>(schedule_.pipeline_step_latency_s.size()) - 1;
  }

  // Room for `more` ops beyond those added: a ring over 16,384 GPUs adds 131,072 at once.
  void reserve(std::size_t more) { schedule_.ops.reserve(schedule_.ops.size() + more); }

  Schedule finish() { return std::move(schedule_); }

 private:
  int add(Op op);
  Schedule schedule_;
};

// Per rank, the ops after which its buffer holds its current data (empty: ready at the start).
using Ready = std::vector<std::vector<int>>;

// Binomial-tree reduce of `bytes` over `group` (ranks) to group[root_index] (MPICH's
// MPIR_Reduce_intra_binomial): in round k (mask 2^k) each rank whose relative index has lowest set
// bit 2^k sends its partial sum to the rank 2^k below it, which sums it in (a Reduce of
// kSumTrafficPerByte * bytes). ceil(log2 m) rounds on the root's path.
void binomial_reduce(ScheduleBuilder& b, const std::vector<int>& group, int root_index,
                     double bytes, Ready& ready);

// Binomial-tree broadcast of `bytes` from group[root_index] (MPICH's binomial MPIR_Bcast): a rank
// forwards to relative index + 2^k for 2^k below its own lowest set bit, highest first, one
// blocking send after another. ceil(log2 m) sends on the critical path.
void binomial_broadcast(ScheduleBuilder& b, const std::vector<int>& group, int root_index,
                        double bytes, Ready& ready);

// The MPI ring allreduce (reduce-scatter then allgather, "lr" in SMPI) over `order`, flow-level:
// one flow per ring edge for the reduce-scatter ((n-1)/n * bytes, latency paid n-1 times), one
// Reduce per rank of the (n-1) received blocks, then one flow per edge for the allgather.
// Every op of the first phase depends on `start`.
void mpi_ring_allreduce(ScheduleBuilder& b, const std::vector<int>& order, double bytes,
                        const std::vector<int>& start, Ready& ready);

// A pipelined chain chain[0] -> chain[1] -> ... -> chain.back(), flow-level: one flow per edge
// carrying `bytes`, the chain's mean latency paid (chain length - 1) times (pipeline id
// `pipeline`), all depending on `deps`. Returns the flows' indices. (NCCL's ring reduce and
// broadcast.)
std::vector<int> pipelined_chain(ScheduleBuilder& b, const std::vector<int>& chain, double bytes,
                                 const std::vector<int>& deps, int pipeline);

// The number of distinct nodes of a request (1 when node_of_rank is empty).
int node_count(const CollectiveRequest& request);

// ceil(log2 n) for n >= 1.
int ceil_log2(int n);

}  // namespace gpuscale::coll
