// A dependency graph of simulated activities, each started just in time by one controller actor
// (../shared/simgrid-notes.md: creating every Comm up front costs 50x more; one controller with
// asynchronous activities is the fastest pattern measured).
//
// A node is a GPU kernel (an Exec of `seconds` alone on its host; concurrent kernels on one GPU
// share it), a transfer (one Comm per store-and-forward leg, in order, then `post_delay` of
// pipeline latency), or a delay (a timer on no resource; a zero delay is a join). Nodes may be
// added while the graph runs, from a node's completion hook.
#pragma once

#include <simgrid/s4u.hpp>

#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace gpuscale::sim {

class DagExecutor {
 public:
  using NodeId = int;
  enum class Kind { Compute, Transfer, Delay };

  struct Spec {
    Kind kind = Kind::Delay;
    simgrid::s4u::Host* host = nullptr;  // Compute
    double seconds = 0;                  // Compute: duration alone on the GPU; Delay: duration
    std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>> legs;  // Transfer
    double bytes = 0;                    // Transfer, per leg
    double post_delay = 0;               // Transfer: extra latency after the last leg
  };

  NodeId add(Spec spec, const std::vector<NodeId>& deps);
  // A join that completes when released: for dependencies known only while the graph runs.
  NodeId add_latch();
  void release(NodeId latch);
  // Runs `hook(now)` when `node` completes (immediately if it already has).
  void on_done(NodeId node, std::function<void(double)> hook);

  // Runs until no node is running or waiting on a timer. Call from inside an actor.
  void run();

  double start_time(NodeId node) const { return nodes_[static_cast<size_t>(node)].start; }
  double end_time(NodeId node) const { return nodes_[static_cast<size_t>(node)].end; }
  bool done(NodeId node) const { return nodes_[static_cast<size_t>(node)].done; }
  const Spec& spec(NodeId node) const { return nodes_[static_cast<size_t>(node)].spec; }
  size_t size() const { return nodes_.size(); }
  long activities_started() const { return activities_started_; }

 private:
  struct Node {
    Spec spec;
    int pending = 0;
    std::vector<NodeId> successors;
    std::vector<std::function<void(double)>> hooks;
    size_t next_leg = 0;
    double start = -1;
    double end = -1;
    bool done = false;
  };
  struct Timer {
    double time;
    NodeId node;
    bool operator>(const Timer& other) const {
      return time != other.time ? time > other.time : node > other.node;
    }
  };

  void start(NodeId node, double now);
  void start_leg(NodeId node);
  void complete(NodeId node, double now);

  std::vector<Node> nodes_;
  std::vector<NodeId> ready_;
  std::vector<simgrid::s4u::ActivityPtr> running_;
  std::vector<NodeId> running_nodes_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  long activities_started_ = 0;
};

}  // namespace gpuscale::sim
