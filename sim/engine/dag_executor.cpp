#include "sim/engine/dag_executor.hpp"

#include <simgrid/kernel/Timer.hpp>

#include <mutex>
#include <stdexcept>

#include "sim/engine/simgrid_platform.hpp"

namespace gpuscale::sim {
namespace sg4 = simgrid::s4u;
namespace {

DagExecutor* running_executor = nullptr;  // SimGrid's completion signal is global

// Appends `item` to the list from `first` to `last` linked through `table` by index.
template <class Item>
void append(std::vector<Item>& table, int& first, int& last, Item item) {
  const auto index = static_cast<int>(table.size());
  table.push_back(std::move(item));
  if (last < 0) {
    first = index;
  } else {
    table[static_cast<size_t>(last)].next = index;
  }
  last = index;
}

}  // namespace

DagExecutor::Node& DagExecutor::new_node() {
  if ((size_ & (kChunkNodes - 1)) == 0) chunks_.push_back(std::make_unique<Node[]>(kChunkNodes));
  Node& n = node_(static_cast<NodeId>(size_));
  n.id = static_cast<NodeId>(size_++);
  return n;
}

DagExecutor::NodeId DagExecutor::add(Spec spec, const std::vector<NodeId>& deps) {
  if (spec.kind == Kind::Transfer && spec.legs.empty()) {
    throw std::logic_error("DagExecutor: a transfer needs at least one leg");
  }
  const auto id = static_cast<NodeId>(size_);
  for (NodeId dep : deps) {
    if (dep < 0 || dep >= id) throw std::logic_error("DagExecutor: a dependency must exist already");
  }
  Node& n = new_node();
  n.kind = spec.kind;
  n.host = spec.host;
  n.seconds = spec.seconds;
  if (spec.kind == Kind::Transfer) {
    n.transfer = static_cast<int>(transfers_.size());
    transfers_.push_back({std::move(spec.legs), spec.bytes, spec.post_delay});
  }
  for (NodeId dep : deps) {
    Node& d = node_(dep);
    if (d.done) continue;
    append(successors_, d.first_successor, d.last_successor, Successor{id});
    ++n.pending;
  }
  if (n.pending == 0) ready_.push_back(id);
  return id;
}

DagExecutor::NodeId DagExecutor::add_latch() {
  Node& n = new_node();
  n.pending = 1;
  return n.id;
}

void DagExecutor::release(NodeId latch) {
  if (--node_(latch).pending == 0) ready_.push_back(latch);
}

void DagExecutor::on_done(NodeId node, std::function<void(double)> hook) {
  Node& n = node_(node);
  if (n.done) {
    hook(n.end);
  } else {
    append(hooks_, n.first_hook, n.last_hook, Hook{std::move(hook)});
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
  switch (n.kind) {
    case Kind::Compute: {
      if (n.seconds <= 0) {
        complete(id, now);
        return;
      }
      sg4::ExecPtr exec = sg4::Exec::init()->set_flops_amount(n.seconds * kHostSpeed)
                              ->set_host(n.host);
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
      if (n.seconds <= 0) {
        complete(id, now);
      } else {
        set_timer(id, now + n.seconds);
      }
      return;
  }
}

void DagExecutor::start_leg(Node& n, double now) {
  Transfer& t = transfers_[static_cast<size_t>(n.transfer)];
  const auto& [src, dst] = t.legs[t.next_leg++];
  sg4::CommPtr comm =
      sg4::Comm::sendto_init(src, dst)->set_payload_size(static_cast<uint64_t>(t.bytes));
  comm->set_data(&n);
  comm->start();
  n.running = comm;
  t.leg_start = now;
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
  if (n.kind == Kind::Transfer) {
    const Transfer& t = transfers_[static_cast<size_t>(n.transfer)];
    if (record_legs_) leg_timings_.push_back({n.id, t.next_leg - 1, t.leg_start, now});
    if (t.next_leg < t.legs.size()) {
      start_leg(n, now);
      return;
    }
    if (t.post_delay > 0) {
      set_timer(n.id, now + t.post_delay);
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
  for (int e = n.first_successor; e >= 0; e = successors_[static_cast<size_t>(e)].next) {
    const NodeId s = successors_[static_cast<size_t>(e)].node;
    if (--node_(s).pending == 0) ready_.push_back(s);
  }
  // A hook may add nodes and hooks (the table may grow): each is moved out before it runs. One
  // registering another on this node runs it at once (n.done is set).
  for (int h = n.first_hook; h >= 0; h = hooks_[static_cast<size_t>(h)].next) {
    const std::function<void(double)> hook = std::move(hooks_[static_cast<size_t>(h)].run);
    hook(now);
  }
}

}  // namespace gpuscale::sim
