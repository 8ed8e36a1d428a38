// Spatial parallelism's halo exchange (LBANN's Distconv, as the lassen-spatial suite ran it):
// each group of spatial.ways() consecutive ranks splits its samples into a grid of blocks, and a
// layer's pass that needs its neighbours' rows or columns (the halo), or the group's batch-norm
// sums, receives them from the group's other GPUs over the machine's links while it computes its
// interior, then computes its border (workloads/src/spatial_partition.hpp says what each block
// receives). Under symmetry rank 0 stands for the group's member that receives the most, so the
// simulated stream is the slowest of the group's.
#pragma once

#include <set>
#include <utility>
#include <vector>

#include "sim/replay/replay_exchange.hpp"
#include "workloads/src/spatial_partition.hpp"

namespace gpuscale::sim {

class SpatialHalo : public PassExchange {
 public:
  // `members[m][layer]`: what the group's member m receives, for each of `ranks` ranks at `batch`
  // samples per GPU of `element_bytes` per value. Throws std::logic_error unless the ranks form
  // whole groups and there is a plan per member.
  SpatialHalo(wl::SpatialSplit split, std::vector<std::vector<wl::SpatialLayer>> members, int ranks,
              int batch, double element_bytes);

  std::optional<double> interior_fraction(int rank, const wl::Task& task) const override;
  std::vector<NodeId> receive(ReplayGraph& graph, int rank, const wl::Task& task,
                              NodeId start) const override;
  std::vector<coll::Schedule> routed_schedules(ReplayGraph& graph) const override;

  // The halo elements per sample a GPU keeps with its blocks until backward (the memory model's
  // MemoryOptions::halo_elements_per_sample).
  double kept_elements_per_sample() const;

 private:
  // The group member compute rank `rank` stands for: its own, or under symmetry the busiest.
  int member_of(int rank) const;
  // The rank a compute rank's member is in the job: itself, or under symmetry group 0's member.
  int job_rank(int rank) const;
  // The rank of the member at grid offset (d_row, d_col) from `member`, in `member_rank`'s group.
  int neighbour(int member_rank, int member, int d_row, int d_col) const;
  // What `rank` receives before it can finish `task`, if anything.
  const wl::SpatialPass* pass_of(int rank, const wl::Task& task) const;
  // The elements one receive carries at this run's batch.
  double elements(const wl::HaloTransfer& h) const;
  // Calls `receive(h)` for every halo or group sum member `member` receives in an iteration.
  template <class Receive>
  void for_each_receive(int member, Receive receive) const;
  // The member of a group whose receives carry the most elements at this batch.
  int busiest_member() const;

  wl::SpatialSplit split_;
  std::vector<std::vector<wl::SpatialLayer>> members_;
  int compute_ranks_;
  int batch_;
  double element_bytes_;
  int busiest_;
};

}  // namespace gpuscale::sim
