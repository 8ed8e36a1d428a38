// A pool of host threads on the DAG: an operation takes a free thread once its inputs are ready
// and holds it until its last node ends (an MXNet engine worker holds its thread through the
// launch, the GPU work and the cudaStreamSynchronize that ends every GPU operation). Operations
// wait in the order they became ready; a pool of 0 threads never makes anyone wait.
#pragma once

#include <deque>

#include "sim/engine/dag_executor.hpp"

namespace gpuscale::sim {

class HostThreadPool {
 public:
  using NodeId = DagExecutor::NodeId;

  HostThreadPool(DagExecutor& dag, int threads) : dag_(&dag), free_(threads), unlimited_(threads == 0) {}

  // A node that completes once `ready` has and a thread is free for the operation. The operation
  // must hand its thread back with `hold_until`.
  NodeId acquire(NodeId ready);
  // The thread taken by an operation returns to the pool when `end` completes.
  void hold_until(NodeId end);

 private:
  void dispatch();

  DagExecutor* dag_;
  int free_;
  bool unlimited_;
  std::deque<NodeId> waiting_;  // grant latches, in the order their operations became ready
};

}  // namespace gpuscale::sim
