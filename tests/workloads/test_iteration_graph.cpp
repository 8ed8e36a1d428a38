// The FP/BP/WU graph of one data-parallel iteration (workloads/src/iteration_graph.hpp): forward
// in layer order, backward in reverse with each layer's weight gradient ready when its
// backward-weights task ends, one exchange and one update per parameter tensor, none of the
// exchange on one GPU, and branches whose backward waits for every consumer.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/support/test_support.hpp"
#include "workloads/src/iteration_graph.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::wl {
namespace {

struct Built {
  Workload workload;
  WorkloadCosts costs;
  IterationGraph graph;
};

Built build(const std::string& name, int gpus) {
  Built b{load_workload(name), {}, {}};
  b.costs = compute_costs(b.workload);
  b.graph = build_iteration_graph(b.workload, b.costs, gpus);
  return b;
}

// Index of the task of `kind` for `layer` (the first such task for tensor tasks).
int task_of(const IterationGraph& g, TaskKind kind, int layer) {
  for (size_t i = 0; i < g.tasks.size(); ++i) {
    if (g.tasks[i].kind == kind && g.tasks[i].layer == layer) return static_cast<int>(i);
  }
  return -1;
}

int layer_index(const Workload& w, const std::string& name) {
  for (size_t i = 0; i < w.layers.size(); ++i) {
    if (w.layers[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool depends_on(const IterationGraph& g, int task, int dep) {
  const auto& deps = g.tasks[static_cast<size_t>(task)].deps;
  return std::find(deps.begin(), deps.end(), dep) != deps.end();
}

TEST(IterationGraph, DepsPointBackwardsAndEveryTaskIsReachable) {
  for (const char* model : {"lenet", "googlenet", "resnet-50", "edsr"}) {
    const Built b = build(model, 4);
    for (size_t i = 0; i < b.graph.tasks.size(); ++i) {
      for (int d : b.graph.tasks[i].deps) {
        EXPECT_GE(d, 0);
        EXPECT_LT(d, static_cast<int>(i)) << model << " task " << i;
      }
    }
  }
}

TEST(IterationGraph, ForwardInLayerOrderThenBackwardInReverse) {
  const Built b = build("lenet", 2);
  const auto& tasks = b.graph.tasks;
  const size_t n = b.workload.layers.size();
  for (size_t i = 1; i < n; ++i) {
    EXPECT_EQ(tasks[i - 1].kind, TaskKind::Forward);
    EXPECT_EQ(tasks[i - 1].layer, static_cast<int>(i));
    if (i > 1) {
      EXPECT_TRUE(depends_on(b.graph, static_cast<int>(i - 1), static_cast<int>(i - 2)));
    }
  }
  // The loss's backward starts from its own forward; then layers in reverse order.
  int previous_layer = static_cast<int>(n);
  for (const Task& t : tasks) {
    if (t.kind != TaskKind::BackwardData && t.kind != TaskKind::BackwardWeights) continue;
    EXPECT_LE(t.layer, previous_layer);
    previous_layer = t.layer;
  }
  const int last_forward = task_of(b.graph, TaskKind::Forward, static_cast<int>(n) - 1);
  EXPECT_TRUE(depends_on(b.graph, task_of(b.graph, TaskKind::BackwardData, static_cast<int>(n) - 1),
                         last_forward));
}

TEST(IterationGraph, FirstLayerComputesNoInputGradient) {
  const Built b = build("resnet-50", 2);
  EXPECT_EQ(task_of(b.graph, TaskKind::BackwardData, 1), -1);
  EXPECT_GE(task_of(b.graph, TaskKind::BackwardWeights, 1), 0);
}

TEST(IterationGraph, WeightGradientsReadyBeforeTheBackwardDataOfTheirLayer) {
  const Built b = build("resnet-50", 2);
  const int fc = layer_index(b.workload, "fc1");
  EXPECT_LT(task_of(b.graph, TaskKind::BackwardWeights, fc), task_of(b.graph, TaskKind::BackwardData, fc));
}

TEST(IterationGraph, OneExchangeAndOneUpdatePerTensorAfterItsGradient) {
  const Built b = build("resnet-50", 8);
  std::map<int, int> exchanges, updates;
  for (size_t i = 0; i < b.graph.tasks.size(); ++i) {
    const Task& t = b.graph.tasks[i];
    if (t.kind == TaskKind::Exchange) {
      ++exchanges[t.tensor];
      ASSERT_EQ(t.deps.size(), 1u);
      const Task& gradient = b.graph.tasks[static_cast<size_t>(t.deps[0])];
      EXPECT_EQ(gradient.kind, TaskKind::BackwardWeights);
      EXPECT_EQ(gradient.layer, b.costs.tensors[static_cast<size_t>(t.tensor)].layer);
    }
    if (t.kind == TaskKind::Update) {
      ++updates[t.tensor];
      EXPECT_EQ(b.graph.tasks[static_cast<size_t>(t.deps[0])].kind, TaskKind::Exchange);
    }
  }
  EXPECT_EQ(exchanges.size(), b.costs.tensors.size());
  EXPECT_EQ(updates.size(), b.costs.tensors.size());
  for (const auto& [tensor, count] : exchanges) EXPECT_EQ(count, 1);
  // Gradients of the last layers are exchanged first.
  const Task* first = nullptr;
  for (const Task& t : b.graph.tasks) {
    if (t.kind == TaskKind::Exchange) {
      first = &t;
      break;
    }
  }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(b.workload.layers[static_cast<size_t>(first->layer)].name, "fc1");
}

TEST(IterationGraph, OneGpuHasNoExchange) {
  const Built b = build("resnet-50", 1);
  for (const Task& t : b.graph.tasks) {
    EXPECT_NE(t.kind, TaskKind::Exchange);
    if (t.kind == TaskKind::Update) {
      EXPECT_EQ(b.graph.tasks[static_cast<size_t>(t.deps[0])].kind, TaskKind::BackwardWeights);
    }
  }
}

TEST(IterationGraph, BranchBackwardWaitsForEveryConsumer) {
  // A residual block's input feeds the body and the shortcut: its gradient needs both.
  const Built b = build("resnet-50", 2);
  const int block_input = layer_index(b.workload, "stage1.1.relu3");  // the first block's output
  const int body_conv = layer_index(b.workload, "stage1.2.conv1");
  const int add = layer_index(b.workload, "stage1.2.add1");
  ASSERT_GE(block_input, 0);
  const int relu_backward = task_of(b.graph, TaskKind::BackwardData, block_input);
  EXPECT_TRUE(depends_on(b.graph, relu_backward, task_of(b.graph, TaskKind::BackwardData, body_conv)));
  EXPECT_TRUE(depends_on(b.graph, relu_backward, task_of(b.graph, TaskKind::BackwardData, add)));
}

// A tied weight's gradient is the sum of every sharing layer's part: Transformer's embedding is
// exchanged once the pre-softmax projection and the decoder's embedding have added theirs.
TEST(IterationGraph, ATiedWeightIsExchangedAfterEveryLayerThatUsesIt) {
  const Built b = build("transformer-big", 2);
  const int embed = layer_index(b.workload, "embed");
  const int exchange = task_of(b.graph, TaskKind::Exchange, embed);
  ASSERT_GE(exchange, 0);
  const std::vector<int>& deps = b.graph.tasks[static_cast<size_t>(exchange)].deps;
  std::set<int> layers;
  for (int dep : deps) {
    EXPECT_EQ(b.graph.tasks[static_cast<size_t>(dep)].kind, TaskKind::BackwardWeights);
    layers.insert(b.graph.tasks[static_cast<size_t>(dep)].layer);
  }
  EXPECT_EQ(layers, (std::set<int>{embed, layer_index(b.workload, "target_embed"),
                                   layer_index(b.workload, "logits")}));
  for (int dep : deps) EXPECT_LT(dep, exchange);
}

}  // namespace
}  // namespace gpuscale::wl
