// MXNet's kvstore=device (CommDevice, src/kvstore/comm.h at 1.1.0; fs §2): per key, one
// CopyFromTo per GPU into the reducer's merge buffer (each an engine operation on the source
// GPU's copy worker, with a sync), the reducer's own gradient too (CommDevice::Reduce copies all
// n sources, comm.h:521-547; one GPU: none), one ElementwiseSum on the reducer, the optimizer
// once there (update_on_kvstore), then one copy per GPU from the reducer's copy worker (one GPU:
// none, it updates in place); without update_on_kvstore the copies carry the sum and every GPU
// runs the optimizer on its own weights. The reducer of each key is MXNet's greedy
// size-balanced choice (workloads/src/reducer_assignment.hpp). Its copies between GPUs without peer access go as the
// framework says (FrameworkConfig::copies_without_peer_access: through host memory in MXNet).
#include <fmt/format.h>

#include <set>

#include "sim/exchange/exchange_trace.hpp"
#include "sim/exchange/methods.hpp"
#include "sim/replay/replay_graph.hpp"

namespace gpuscale::sim {
namespace {

using NodeId = DagExecutor::NodeId;

class KvstoreDeviceBuild : public GradientExchangeBuild {
 public:
  // `store_updates`: the framework's update_on_kvstore.
  KvstoreDeviceBuild(ReplayGraph& graph, bool store_updates, std::vector<int> reducer)
      : g_(graph), store_updates_(store_updates), reducer_(std::move(reducer)) {}

  void gradient_ready(int key, const GradientReady& ready, ExchangeIteration& it) override {
    const auto t = static_cast<size_t>(key);
    const double bytes = g_.tensor_bytes()[t];
    const int ranks = g_.ranks();
    const auto on = [&](int rank) {
      return ready.computed[static_cast<size_t>(g_.compute_rank(rank))];
    };
    std::vector<NodeId>& weights = it.weights[t];
    auto deliver = [&](int rank, NodeId node) { weights[static_cast<size_t>(rank)] = node; };
    const int root = reducer_[t];
    if (ranks == 1) {
      // One GPU has no kvstore and updates its weights in place (python/mxnet/model.py:78-80 at
      // 1.1.0).
      deliver(root, g_.update_op(root, t, {on(root)}));
      it.updated(t);
      return;
    }
    std::vector<NodeId> gathered{g_.local_copy_op(root, t, {on(root)})};
    for (int src = 0; src < ranks; ++src) {
      if (src == root) continue;
      gathered.push_back(
          g_.engine_op(g_.copy_pool(src), g_.engine_factor(src), {on(src)}, 1, 1,
                       [&](NodeId start) { return g_.copy(src, root, bytes, start); }));
    }
    HostThreadPool& pool = g_.compute_pool(g_.compute_rank(root));
    const NodeId merged =
        g_.engine_op(pool, g_.engine_factor(root), gathered, 1, 1, [&](NodeId start) {
          return g_.compute_node(root, g_.reduction_s((ranks + 1) * bytes), {start}, [&] {
            return g_.tensor_kernel("sum", KernelCategory::reduction, t, bytes);
          });
        });
    // With update_on_kvstore the reducer updates the weights and sends them out; without
    // (MXNET_UPDATE_ON_KVSTORE=0) it sends the summed gradient out, the same bytes, and every GPU
    // updates its own weights (model.py _update_params). Either way the reducer's own replica
    // gets its copy from the merge buffer (CommDevice::Broadcast).
    const NodeId sent = store_updates_ ? g_.update_op(root, t, {merged}) : merged;
    auto received = [&](int rank, NodeId copied) {
      if (rank >= g_.compute_ranks()) return;
      deliver(rank, store_updates_ ? copied : g_.update_op(rank, t, {copied}));
    };
    received(root, g_.local_copy_op(root, t, {sent}));
    for (int dst = 0; dst < ranks; ++dst) {
      if (dst == root) continue;
      received(dst, g_.engine_op(g_.copy_pool(root), g_.engine_factor(root), {sent}, 1, 1,
                                 [&](NodeId start) { return g_.copy(root, dst, bytes, start); }));
    }
    it.updated(t);
  }

 private:
  ReplayGraph& g_;
  bool store_updates_;
  std::vector<int> reducer_;  // [key]: its reducer's rank
};

class KvstoreDevice : public ExchangeMethod {
 public:
  using ExchangeMethod::ExchangeMethod;

  std::string describe() const override { return "kvstore=device per key"; }
  bool process_per_gpu() const override { return framework().execution.process_per_gpu; }
  std::optional<topo::RoutingMode> copy_routing() const override {
    return framework().copies_without_peer_access;
  }

  // Its copies go between each key's reducer and every other GPU, both ways, one by one and
  // flow by flow (ReplayGraph::copy), so those pairs' routes are on the platform at any GPU
  // count; its reductions run on the reducers' GPUs, hosts as the copies' ends.
  std::vector<coll::Schedule> routed_schedules(ReplayGraph& graph) const override {
    const std::vector<int> reducer = reducers(graph);
    std::vector<coll::Schedule> schedules;
    for (int root : std::set<int>(reducer.begin(), reducer.end())) {
      for (int rank = 0; rank < graph.ranks(); ++rank) {
        if (rank == root) continue;
        schedules.push_back(graph.copy_schedule(rank, root, 1e6));
        schedules.push_back(graph.copy_schedule(root, rank, 1e6));
      }
    }
    return schedules;
  }

  std::unique_ptr<GradientExchangeBuild> build(ReplayGraph& graph) const override {
    return std::make_unique<KvstoreDeviceBuild>(graph, framework().update_on_kvstore,
                                                reducers(graph));
  }

 protected:
  // Each reducer holds the merged array and n-1 copies of the other GPUs' gradients for its keys
  // (comm.h CommDevice::Reduce allocates `copy_buf`, noting "this results in large device memory
  // usage for huge ndarray"), and where it runs the optimizer, the weights and their state.
  wl::ExchangeBuffers buffers(const wl::WorkloadCosts& costs, const wl::PrecisionRecipe& precision,
                              int gpus) const override {
    wl::ExchangeBuffers out{framework().update_on_kvstore,
                            std::vector<double>(static_cast<size_t>(gpus), 0.0)};
    std::vector<double> key_bytes;
    for (const wl::ParamTensor& t : costs.tensors)
      key_bytes.push_back(static_cast<double>(t.elements) * precision.gradient_bytes);
    const std::vector<int> reducer = wl::assign_reducers(key_bytes, gpus, settings().reducers);
    const double stored_per_gradient_byte =
        out.optimizer_in_store ? stored_bytes_per_param(precision) / precision.gradient_bytes : 0.0;
    const double per_key = gpus + stored_per_gradient_byte;
    for (size_t k = 0; k < key_bytes.size(); ++k) {
      out.bytes[static_cast<size_t>(reducer[k])] += key_bytes[k] * per_key;
    }
    return out;
  }

  // An ALL_REDUCE per key, the Chakra node nearest to a gather-sum-scatter through the reducer.
  void export_exchange(ExchangeTrace& trace) const override {
    std::vector<std::vector<int>> exchanged;
    for (const ExchangeTrace::Gradient& g : trace.gradients()) {
      exchanged.push_back(
          {trace.collective(fmt::format("allreduce {}", trace.name_of(g)),
                            wl::Collective::AllReduce, trace.bytes_of(g), g.ready)});
    }
    trace.updates(exchanged, false);
  }

 private:
  std::vector<int> reducers(const ReplayGraph& graph) const {
    return wl::assign_reducers(graph.tensor_bytes(), graph.ranks(), settings().reducers);
  }
};

}  // namespace

std::unique_ptr<ExchangeMethod> make_kvstore_device(ExchangeSettings settings) {
  return std::make_unique<KvstoreDevice>(std::move(settings));
}

}  // namespace gpuscale::sim
