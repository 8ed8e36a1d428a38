#include "sim/replay/host_threads.hpp"

namespace gpuscale::sim {

HostThreadPool::NodeId HostThreadPool::acquire(NodeId ready) {
  if (unlimited_) return ready;
  const NodeId grant = dag_->add_latch();
  dag_->on_done(ready, [this, grant](double) {
    waiting_.push_back(grant);
    dispatch();
  });
  return grant;
}

void HostThreadPool::hold_until(NodeId end) {
  if (unlimited_) return;
  dag_->on_done(end, [this](double) {
    ++free_;
    dispatch();
  });
}

void HostThreadPool::dispatch() {
  while (free_ > 0 && !waiting_.empty()) {
    --free_;
    dag_->release(waiting_.front());
    waiting_.pop_front();
  }
}

}  // namespace gpuscale::sim
