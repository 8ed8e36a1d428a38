#include "sim/exchange/spatial_halo.hpp"

#include <stdexcept>

#include "sim/replay/replay_graph.hpp"

namespace gpuscale::sim {

SpatialHalo::SpatialHalo(wl::SpatialSplit split, std::vector<std::vector<wl::SpatialLayer>> members,
                         int ranks, int batch, double element_bytes)
    : split_(split),
      members_(std::move(members)),
      compute_ranks_(simulated_compute_ranks(ranks)),
      batch_(batch),
      element_bytes_(element_bytes) {
  if (ranks % split_.ways() != 0 || static_cast<int>(members_.size()) != split_.ways()) {
    throw std::logic_error("a spatial split needs whole groups of ranks and a plan per member");
  }
  busiest_ = busiest_member();
}

template <class Receive>
void SpatialHalo::for_each_receive(int member, Receive receive) const {
  for (const wl::SpatialLayer& layer : members_[static_cast<size_t>(member)]) {
    for (const wl::SpatialPass* pass : {&layer.forward, &layer.backward_data}) {
      for (const wl::HaloTransfer& h : pass->receives) receive(h);
    }
  }
}

double SpatialHalo::elements(const wl::HaloTransfer& h) const {
  return h.elements_per_sample * batch_ + h.elements_fixed;
}

int SpatialHalo::busiest_member() const {
  int busiest = 0;
  double most = -1;
  for (int m = 0; m < static_cast<int>(members_.size()); ++m) {
    double total = 0;
    for_each_receive(m, [&](const wl::HaloTransfer& h) { total += elements(h); });
    if (total > most) {
      most = total;
      busiest = m;
    }
  }
  return busiest;
}

int SpatialHalo::member_of(int rank) const {
  return compute_ranks_ == 1 ? busiest_ : rank % split_.ways();
}

int SpatialHalo::job_rank(int rank) const { return compute_ranks_ == 1 ? busiest_ : rank; }

int SpatialHalo::neighbour(int member_rank, int member, int d_row, int d_col) const {
  const int cols = split_.cols;
  return member_rank - member + (member / cols + d_row) * cols + member % cols + d_col;
}

const wl::SpatialPass* SpatialHalo::pass_of(int rank, const wl::Task& task) const {
  if (task.kind == wl::TaskKind::BackwardWeights) return nullptr;
  const wl::SpatialLayer& layer =
      members_[static_cast<size_t>(member_of(rank))][static_cast<size_t>(task.layer)];
  const wl::SpatialPass& pass =
      task.kind == wl::TaskKind::Forward ? layer.forward : layer.backward_data;
  return pass.receives.empty() ? nullptr : &pass;
}

std::optional<double> SpatialHalo::interior_fraction(int rank, const wl::Task& task) const {
  const wl::SpatialPass* pass = pass_of(rank, task);
  if (pass == nullptr) return std::nullopt;
  return pass->interior_fraction;
}

std::vector<SpatialHalo::NodeId> SpatialHalo::receive(ReplayGraph& graph, int rank,
                                                      const wl::Task& task, NodeId start) const {
  std::vector<NodeId> received;
  const int member = member_of(rank), to = job_rank(rank);
  for (const wl::HaloTransfer& h : pass_of(rank, task)->receives) {
    received.push_back(graph.copy(neighbour(to, member, h.d_row, h.d_col), to,
                                  elements(h) * element_bytes_, start));
  }
  return received;
}

std::vector<coll::Schedule> SpatialHalo::routed_schedules(ReplayGraph& graph) const {
  std::set<std::pair<int, int>> pairs;
  for (int r = 0; r < compute_ranks_; ++r) {
    const int member = member_of(r), to = job_rank(r);
    for_each_receive(member, [&](const wl::HaloTransfer& h) {
      pairs.emplace(neighbour(to, member, h.d_row, h.d_col), to);
    });
  }
  std::vector<coll::Schedule> schedules;
  for (const auto& [from, to] : pairs) schedules.push_back(graph.copy_schedule(from, to, 1e6));
  return schedules;
}

double SpatialHalo::kept_elements_per_sample() const {
  return wl::kept_halo_elements_per_sample(members_);
}

}  // namespace gpuscale::sim
