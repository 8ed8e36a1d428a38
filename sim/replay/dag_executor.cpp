#include "sim/replay/dag_executor.hpp"

#include <stdexcept>

#include "sim/platform/simgrid_platform.hpp"

namespace gpuscale::sim {
namespace sg4 = simgrid::s4u;

DagExecutor::NodeId DagExecutor::add(Spec spec, const std::vector<NodeId>& deps) {
  const NodeId id = static_cast<NodeId>(nodes_.size());
  if (spec.kind == Kind::Transfer && spec.legs.empty()) {
    throw std::logic_error("DagExecutor: a transfer needs at least one leg");
  }
  nodes_.push_back(Node{std::move(spec), 0, {}, {}, 0, -1, -1, false});
  for (NodeId dep : deps) {
    if (dep < 0 || dep >= id) throw std::logic_error("DagExecutor: a dependency must exist already");
    Node& d = nodes_[static_cast<size_t>(dep)];
    if (d.done) continue;
    d.successors.push_back(id);
    ++nodes_[static_cast<size_t>(id)].pending;
  }
  if (nodes_[static_cast<size_t>(id)].pending == 0) ready_.push_back(id);
  return id;
}

DagExecutor::NodeId DagExecutor::add_latch() {
  const NodeId id = static_cast<NodeId>(nodes_.size());
  nodes_.push_back(Node{Spec{}, 1, {}, {}, 0, -1, -1, false});
  return id;
}

void DagExecutor::release(NodeId latch) {
  if (--nodes_[static_cast<size_t>(latch)].pending == 0) ready_.push_back(latch);
}

void DagExecutor::on_done(NodeId node, std::function<void(double)> hook) {
  Node& n = nodes_[static_cast<size_t>(node)];
  if (n.done) {
    hook(n.end);
  } else {
    n.hooks.push_back(std::move(hook));
  }
}

void DagExecutor::start(NodeId id, double now) {
  Node& n = nodes_[static_cast<size_t>(id)];
  n.start = now;
  switch (n.spec.kind) {
    case Kind::Compute: {
      if (n.spec.seconds <= 0) {
        complete(id, now);
        return;
      }
      sg4::ExecPtr exec = sg4::Exec::init()->set_flops_amount(n.spec.seconds * kHostSpeed)
                              ->set_host(n.spec.host);
      exec->start();
      running_.push_back(exec);
      running_nodes_.push_back(id);
      ++activities_started_;
      return;
    }
    case Kind::Transfer:
      start_leg(id);
      return;
    case Kind::Delay:
      if (n.spec.seconds <= 0) {
        complete(id, now);
      } else {
        timers_.push({now + n.spec.seconds, id});
      }
      return;
  }
}

void DagExecutor::start_leg(NodeId id) {
  Node& n = nodes_[static_cast<size_t>(id)];
  const auto& [src, dst] = n.spec.legs[n.next_leg++];
  running_.push_back(sg4::Comm::sendto_async(src, dst, n.spec.bytes));
  running_nodes_.push_back(id);
  ++activities_started_;
}

void DagExecutor::complete(NodeId id, double now) {
  Node& n = nodes_[static_cast<size_t>(id)];
  n.done = true;
  n.end = now;
  for (NodeId s : n.successors) {
    if (--nodes_[static_cast<size_t>(s)].pending == 0) ready_.push_back(s);
  }
  // Hooks may add nodes (and so move `nodes_`): take them out first.
  auto hooks = std::move(nodes_[static_cast<size_t>(id)].hooks);
  for (auto& hook : hooks) hook(now);
}

void DagExecutor::run() {
  constexpr double kTimerSlack = 1e-15;  // s: timers due within it fire together
  while (true) {
    while (!ready_.empty()) {
      std::vector<NodeId> batch;
      batch.swap(ready_);
      for (NodeId id : batch) start(id, sg4::Engine::get_clock());
    }
    if (running_.empty() && timers_.empty()) break;
    const double now = sg4::Engine::get_clock();
    const double timeout = timers_.empty() ? -1.0 : std::max(0.0, timers_.top().time - now);
    const ssize_t finished = running_.empty() ? -1 : sg4::Activity::wait_any_for(running_, timeout);
    if (running_.empty() && timeout > 0) sg4::this_actor::sleep_for(timeout);
    const double clock = sg4::Engine::get_clock();
    if (finished >= 0 && static_cast<size_t>(finished) < running_.size()) {
      const size_t i = static_cast<size_t>(finished);
      const NodeId id = running_nodes_[i];
      running_.erase(running_.begin() + static_cast<long>(i));
      running_nodes_.erase(running_nodes_.begin() + static_cast<long>(i));
      Node& n = nodes_[static_cast<size_t>(id)];
      if (n.spec.kind == Kind::Transfer && n.next_leg < n.spec.legs.size()) {
        start_leg(id);
      } else if (n.spec.kind == Kind::Transfer && n.spec.post_delay > 0) {
        timers_.push({clock + n.spec.post_delay, id});
        n.spec.post_delay = 0;
      } else {
        complete(id, clock);
      }
    }
    while (!timers_.empty() && timers_.top().time <= clock + kTimerSlack) {
      const NodeId id = timers_.top().node;
      timers_.pop();
      complete(id, clock);
    }
  }
}

}  // namespace gpuscale::sim
