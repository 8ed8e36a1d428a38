#include "sim/replay/replay.hpp"

#include <memory>
#include <stdexcept>

#include "sim/replay/forward_backward.hpp"
#include "sim/replay/input_phase.hpp"
#include "sim/replay/replay_exchange.hpp"
#include "sim/replay/replay_graph.hpp"
#include "sim/replay/replay_measure.hpp"
#include "sim/replay/replay_timeline.hpp"
#include "topologies/core/config_reader.hpp"

namespace gpuscale::sim {
namespace {

using NodeId = DagExecutor::NodeId;

// The iterations of one run, phase by phase: the input and the Python thread's issues
// (input_phase.hpp), each GPU's forward and backward (forward_backward.hpp), the Python thread's
// pushes, then each gradient handed to the exchange method as it becomes ready, which exchanges
// it and updates the weights (replay_exchange.hpp).
class Replay {
 public:
  explicit Replay(const ReplaySetup& s)
      : s_(s),
        tasks_(wl::build_iteration_graph(*s.workload, *s.costs, static_cast<int>(s.gpus.size()))),
        graph_(s, s.exchange->process_per_gpu()) {}

  ReplayResult run() {
    graph_.build_platform(routed_schedules(), compute_hosts());
    ForwardBackward passes(graph_, tasks_, s_.halo);
    InputPhase input(graph_);
    const std::unique_ptr<GradientExchangeBuild> exchange = s_.exchange->build(graph_);
    compile(input, passes, *exchange);
    graph_.run();
    double compute_s = passes.layers_s();
    for (double u : graph_.update_seconds()) compute_s += u;
    ReplayResult result = measure_replay({&graph_.dag(), &iterations_,
                                          graph_.draws().any_varies(), compute_s,
                                          input.steady_batch_s(), graph_.compute_ranks(),
                                          &graph_.compiler().link_bytes(),
                                          &graph_.gradient_allreduces()});
    if (s_.record_timeline) {
      result.timeline = replay_timeline(*s_.topology, *s_.router, s_.gpus, graph_.dag(),
                                        graph_.compiler(), graph_.kernels());
    }
    return result;
  }

 private:
  // The GPUs that run kernels: the platform's hosts, beside those the schedules add.
  std::vector<int> compute_hosts() const {
    std::vector<int> hosts;
    for (int r = 0; r < graph_.compute_ranks(); ++r)
      hosts.push_back(s_.gpus[static_cast<size_t>(r)]);
    return hosts;
  }

  // What the platform must route: every schedule of this run simulated flow by flow. Schedules
  // evaluated from link loads (evaluated_from_link_loads) need no legs on the platform.
  std::vector<coll::Schedule> routed_schedules() {
    std::vector<coll::Schedule> routed;
    if (graph_.ranks() < 2) return routed;
    auto add = [&](std::vector<coll::Schedule> schedules) {
      for (coll::Schedule& s : schedules) {
        if (!evaluated_from_link_loads(s, graph_.ranks())) routed.push_back(std::move(s));
      }
    };
    add(s_.exchange->routed_schedules(graph_));
    if (s_.halo != nullptr) add(s_.halo->routed_schedules(graph_));
    return routed;
  }

  void compile(InputPhase& input, ForwardBackward& passes, GradientExchangeBuild& exchange) {
    const auto cr = static_cast<size_t>(graph_.compute_ranks());
    // [tensor][rank]: the new weights of the previous iteration, on each compute rank's GPU.
    std::vector<std::vector<NodeId>> weights(graph_.tensor_bytes().size(),
                                             std::vector<NodeId>(cr, -1));
    // PyTorch's Python thread steps the optimizer after backward() returns, but the exchange
    // starts from autograd's hooks during backward; MXNet's Python thread pushes each key.
    const bool pushed_by_python = !pytorch_loop();
    const bool hook_hands_over = pytorch_loop() && s_.mechanisms.handover;
    for (int k = 0; k < s_.iterations; ++k) {
      graph_.draws().next_iteration();
      IterationNodes nodes;
      const IssuedWork work = input.build(k, nodes);
      const PassesDone done = passes.build(k, work, weights, nodes);
      const std::vector<std::vector<NodeId>> pushed = push_keys(done);
      ExchangeIteration it{weights, pushed, done.backward_issued, nodes};
      // Exchange and update, key by key in the order gradients become ready (the Update tasks).
      for (const wl::Task& task : tasks_.tasks) {
        if (task.kind != wl::TaskKind::Update) continue;
        const auto t = static_cast<size_t>(task.tensor);
        const auto layer = static_cast<size_t>(task.layer);
        GradientReady ready;
        for (int r = 0; r < graph_.compute_ranks(); ++r) {
          const auto ri = static_cast<size_t>(r);
          const auto process = static_cast<size_t>(graph_.process_of(r));
          const NodeId computed = done.grad_ready[layer][ri];
          ready.computed.push_back(
              pushed_by_python ? graph_.join({computed, pushed[t][process]}) : computed);
          // PyTorch's gradient hook runs on the issuing thread; MXNet's Python thread pushes.
          ready.handed_over.push_back(hook_hands_over ? done.grad_issued[layer][ri]
                                                      : ready.computed.back());
        }
        exchange.gradient_ready(task.tensor, ready, it);
      }
      exchange.end_iteration(it);
      iterations_.push_back(std::move(nodes));
    }
    exchange.end_run();
  }

  // The Python thread's update(): per key, in parameter order (MXNet: push, updater and pull,
  // running ahead of the GPUs; PyTorch: optimizer.step() once backward() has returned, i.e. once
  // its rank's backward is issued); then MXNet's update_metric, a blocking read of each GPU's
  // forward output (PyTorch read its loss before backward). Each key's push, by process.
  std::vector<std::vector<NodeId>> push_keys(const PassesDone& done) {
    const bool pytorch = pytorch_loop();
    std::vector<std::vector<NodeId>> backward_returned(static_cast<size_t>(graph_.processes()));
    if (pytorch) {
      for (int r = 0; r < graph_.compute_ranks(); ++r) {
        backward_returned[static_cast<size_t>(graph_.process_of(r))].push_back(
            done.backward_issued[static_cast<size_t>(r)]);
      }
    }
    std::vector<std::vector<NodeId>> pushed(graph_.tensor_bytes().size());  // [tensor][process]
    for (std::vector<NodeId>& key : pushed) {
      for (int p = 0; p < graph_.processes(); ++p) {
        key.push_back(graph_.python_step(p, graph_.python_per_key_s(),
                                         backward_returned[static_cast<size_t>(p)]));
      }
    }
    if (!pytorch) {
      for (int r = 0; r < graph_.compute_ranks(); ++r) {
        graph_.python_step(graph_.process_of(r), graph_.metric_sync_s(),
                           {done.forward_done[static_cast<size_t>(r)]});
      }
    }
    return pushed;
  }

  bool pytorch_loop() const {
    return s_.framework->execution.training_loop == wl::TrainingLoop::PytorchMain;
  }

  const ReplaySetup& s_;
  wl::IterationGraph tasks_;
  ReplayGraph graph_;
  std::vector<IterationNodes> iterations_;
};

}  // namespace

const std::vector<std::string>& mechanism_names() {
  static const std::vector<std::string> names{"engine", "host",         "input",
                                              "setup",  "coordination", "handover"};
  return names;
}

Mechanisms mechanisms_without(const std::vector<std::string>& names) {
  Mechanisms m;
  for (const std::string& name : names) {
    if (name == "engine") {
      m.engine = false;
    } else if (name == "host") {
      m.host = false;
    } else if (name == "input") {
      m.input = false;
    } else if (name == "setup") {
      m.setup = false;
    } else if (name == "coordination") {
      m.coordination = false;
    } else if (name == "handover") {
      m.handover = false;
    } else {
      throw ConfigError({"--without"}, unknown_name_message("mechanism", name, mechanism_names()));
    }
  }
  return m;
}

ReplayResult replay_iterations(const ReplaySetup& setup) {
  if (setup.gpus.empty() || setup.iterations < 1 || setup.framework == nullptr ||
      setup.exchange == nullptr) {
    throw std::logic_error("replay: no GPUs, iterations, framework or exchange method");
  }
  return Replay(setup).run();
}

}  // namespace gpuscale::sim
