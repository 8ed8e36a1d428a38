#include "sim/engine/dag_executor.hpp"

#include <simgrid/kernel/Timer.hpp>

#include <mutex>
#include <stdexcept>

#include "sim/engine/simgrid_platform.hpp"

namespace gpuscale::sim {
namespace sg4 = simgrid::s4u;
namespace {

DagExecutor* running_executor = nullptr;  // SimGrid's completion signal is global

}  // namespace

DagExecutor::NodeId DagExecutor::add(Spec spec, const std::vector<NodeId>& deps) {
  const NodeId id = static_cast<NodeId>(nodes_.size());
  if (spec.kind == Kind::Transfer && spec.legs.empty()) {
    throw std::logic_error("DagExecutor: a transfer needs at least one leg");
  }
  Node& n = nodes_.emplace_back();
  n.id = id;
  n.spec = std::move(spec);
  for (NodeId dep : deps) {
    if (dep < 0 || dep >= id) throw std::logic_error("DagExecutor: a dependency must exist already");
    Node& d = node_(dep);
    if (d.done) continue;
    d.successors.push_back(id);
    ++n.pending;
  }
  if (n.pending == 0) ready_.push_back(id);
  return id;
}

DagExecutor::NodeId DagExecutor::add_latch() {
  const NodeId id = static_cast<NodeId>(nodes_.size());
  Node& n = nodes_.emplace_back();
  n.id = id;
  n.pending = 1;
  return id;
}

void DagExecutor::release(NodeId latch) {
  if (--node_(latch).pending == 0) ready_.push_back(latch);
}

void DagExecutor::on_done(NodeId node, std::function<void(double)> hook) {
  Node& n = node_(node);
  if (n.done) {
    hook(n.end);
  } else {
    n.hooks.push_back(std::move(hook));
  }
}

void DagExecutor::run() {
  static std::once_flag connected;
  std::call_once(connected, [] { sg4::Activity::on_completion_cb(dispatch_completion); });
  if (running_executor != nullptr) throw std::logic_error("DagExecutor: another one is running");
  running_executor = this;
  start_ready();
  sg4::Engine::get_instance()->run();
  running_executor = nullptr;
  just_finished_.clear();
}

void DagExecutor::dispatch_completion(const sg4::Activity& activity) {
  if (running_executor != nullptr) running_executor->activity_done(activity);
}

void DagExecutor::start_ready() {
  const double now = sg4::Engine::get_clock();
  while (!ready_.empty()) {
    std::vector<NodeId> batch;
    batch.swap(ready_);
    for (NodeId id : batch) start(id, now);
  }
}

void DagExecutor::start(NodeId id, double now) {
  Node& n = node_(id);
  n.start = now;
  switch (n.spec.kind) {
    case Kind::Compute: {
      if (n.spec.seconds <= 0) {
        complete(id, now);
        return;
      }
      sg4::ExecPtr exec = sg4::Exec::init()->set_flops_amount(n.spec.seconds * kHostSpeed)
                              ->set_host(n.spec.host);
      exec->set_data(&n);
      exec->start();
      n.running = exec;
      ++activities_started_;
      return;
    }
    case Kind::Transfer:
      start_leg(n, now);
      return;
    case Kind::Delay:
      if (n.spec.seconds <= 0) {
        complete(id, now);
      } else {
        set_timer(id, now + n.spec.seconds);
      }
      return;
  }
}

void DagExecutor::start_leg(Node& n, double now) {
  const auto& [src, dst] = n.spec.legs[n.next_leg++];
  sg4::CommPtr comm = sg4::Comm::sendto_init(src, dst)->set_payload_size(
      static_cast<uint64_t>(n.spec.bytes));
  comm->set_data(&n);
  comm->start();
  n.running = comm;
  n.leg_start = now;
  ++activities_started_;
}

void DagExecutor::set_timer(NodeId id, double date) {
  simgrid::kernel::timer::Timer::set(date, [this, id] {
    complete(id, sg4::Engine::get_clock());
    start_ready();
  });
}

void DagExecutor::activity_done(const sg4::Activity& activity) {
  Node& n = *activity.get_data<Node>();
  const double now = sg4::Engine::get_clock();
  if (just_finished_at_ < now) {
    just_finished_.clear();
    just_finished_at_ = now;
  }
  just_finished_.push_back(std::move(n.running));
  if (n.spec.kind == Kind::Transfer) {
    if (record_legs_) leg_timings_.push_back({n.id, n.next_leg - 1, n.leg_start, now});
    if (n.next_leg < n.spec.legs.size()) {
      start_leg(n, now);
      return;
    }
    if (n.spec.post_delay > 0) {
      set_timer(n.id, now + n.spec.post_delay);
      return;
    }
  }
  complete(n.id, now);
  start_ready();
}

void DagExecutor::complete(NodeId id, double now) {
  Node& n = node_(id);
  n.done = true;
  n.end = now;
  for (NodeId s : n.successors) {
    if (--node_(s).pending == 0) ready_.push_back(s);
  }
  // A hook may add nodes; the deque keeps `n` in place, but take the hooks out first anyway so
  // that a hook registering another on this node runs it at once (n.done is set).
  auto hooks = std::move(n.hooks);
  for (auto& hook : hooks) hook(now);
}

}  // namespace gpuscale::sim
