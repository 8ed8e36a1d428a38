// A dependency graph of simulated activities, each started just in time, from SimGrid's
// completion callbacks rather than from an actor.
//
// Why not an actor waiting on its activities: Activity::wait_any_for registers a simcall with
// every running activity and unregisters it at each completion, so a controller actor with
// thousands of concurrent flows (a 512-GPU tree allreduce has 2,044) is quadratic: 175 s for
// such an iteration, under a second with callbacks. (SimGrid still removes each finished activity
// from its issuer's list by a scan, a smaller quadratic term.) Creating the whole graph up front
// is worse still (../shared/simgrid-notes.md: 50x).
//
// A node is a GPU kernel (an Exec of `seconds` alone on its host; concurrent kernels on one GPU
// share it), a transfer (one Comm per store-and-forward leg, in order, then `post_delay` of
// pipeline latency), or a delay (a kernel timer on no resource; a zero delay is a join). Nodes may
// be added while the graph runs, from a node's completion hook.
#pragma once

#include <simgrid/s4u.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace gpuscale::sim {

class DagExecutor {
 public:
  using NodeId = int;
  enum class Kind : std::uint8_t { Compute, Transfer, Delay };

  struct Spec {
    Kind kind = Kind::Delay;
    simgrid::s4u::Host* host = nullptr;  // Compute
    double seconds = 0;                  // Compute: duration alone on the GPU; Delay: duration
    std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>> legs;  // Transfer
    double bytes = 0;                    // Transfer, per leg
    double post_delay = 0;               // Transfer: extra latency after the last leg
  };

  // When one leg of a transfer ran, for timelines.
  struct LegTiming {
    NodeId node;
    size_t leg;
    double start, end;
  };

  NodeId add(Spec spec, const std::vector<NodeId>& deps);
  // A join that completes when released: for dependencies known only while the graph runs.
  NodeId add_latch();
  void release(NodeId latch);
  // Runs `hook(now)` when `node` completes (immediately if it already has).
  void on_done(NodeId node, std::function<void(double)> hook);
  // Records every leg's start and end into leg_timings() (off by default: it costs memory).
  void record_legs() { record_legs_ = true; }

  // Runs the engine until nothing is left to do. Call outside any actor, once the platform is
  // built; one executor runs at a time.
  void run();

  double start_time(NodeId node) const { return node_(node).start; }
  double end_time(NodeId node) const { return node_(node).end; }
  bool done(NodeId node) const { return node_(node).done; }
  long activities_started() const { return activities_started_; }
  const std::vector<LegTiming>& leg_timings() const { return leg_timings_; }

 private:
  // What every node needs, kept small: a 512-GPU sampled run holds a quarter of a million nodes,
  // and their allocation, page faults and cache misses were most of its cost. A transfer's legs,
  // the successor lists and the hooks live in tables of their own.
  struct Node {
    simgrid::s4u::ActivityPtr running;  // SimGrid needs a reference to every running activity
    simgrid::s4u::Host* host = nullptr;  // Compute
    double seconds = 0;                  // Compute, Delay
    double start = -1;
    double end = -1;
    NodeId id = 0;
    int pending = 0;
    int first_successor = -1;  // the node's successors: a list through successors_, in the
    int last_successor = -1;   // order they were added (the order they start in)
    int first_hook = -1;       // the hooks to run when it completes: a list through hooks_
    int last_hook = -1;
    int transfer = -1;         // Transfer: its index in transfers_
    Kind kind = Kind::Delay;
    bool done = false;
  };
  static_assert(sizeof(Node) <= 72);
  struct Successor {
    NodeId node;
    int next = -1;
  };
  struct Hook {
    std::function<void(double)> run;
    int next = -1;
  };
  struct Transfer {
    std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>> legs;
    double bytes = 0;
    double post_delay = 0;
    size_t next_leg = 0;
    double leg_start = -1;
  };
  // Nodes live in fixed chunks: activities point at their node, so nodes never move.
  static constexpr size_t kChunkBits = 12;
  static constexpr size_t kChunkNodes = size_t{1} << kChunkBits;

  Node& node_(NodeId id) {
    const auto i = static_cast<size_t>(id);
    return chunks_[i >> kChunkBits][i & (kChunkNodes - 1)];
  }
  const Node& node_(NodeId id) const {
    const auto i = static_cast<size_t>(id);
    return chunks_[i >> kChunkBits][i & (kChunkNodes - 1)];
  }
  Node& new_node();
  void start_ready();
  void start(NodeId node, double now);
  void start_leg(Node& node, double now);
  void set_timer(NodeId node, double date);
  void activity_done(const simgrid::s4u::Activity& activity);
  void complete(NodeId node, double now);
  static void dispatch_completion(const simgrid::s4u::Activity& activity);

  std::vector<std::unique_ptr<Node[]>> chunks_;
  size_t size_ = 0;
  std::vector<Successor> successors_;
  std::vector<Transfer> transfers_;
  std::vector<Hook> hooks_;
  std::vector<NodeId> ready_;
  // Activities that completed at the current instant: the engine may still touch them, so they
  // are freed only once the clock moves on.
  std::vector<simgrid::s4u::ActivityPtr> just_finished_;
  double just_finished_at_ = -1;
  std::vector<LegTiming> leg_timings_;
  bool record_legs_ = false;
  long activities_started_ = 0;
};

}  // namespace gpuscale::sim
