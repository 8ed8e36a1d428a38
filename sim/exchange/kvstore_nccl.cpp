// MXNet's kvstore=nccl (src/kvstore/kvstore_nccl.h at 1.1.0; fs §2): per key one CPU-priority
// engine operation that holds the global GPU allocator mutex and launches a group of ncclReduce
// to GPU0, then CommSync (a cudaStreamSynchronize on every GPU in turn); the update on GPU0; the
// same for ncclBcast (without update_on_kvstore the broadcast carries the summed gradient and
// every GPU updates its own weights). One GPU: no NCCL call and no CommSync, only the empty
// CPU-priority operation. The reduce and the broadcast run NCCL's ring (sim/collectives/nccl_ring.cpp).
#include <fmt/format.h>

#include "sim/collectives/registry.hpp"
#include "sim/exchange/exchange_trace.hpp"
#include "sim/exchange/methods.hpp"
#include "sim/replay/replay_graph.hpp"

namespace gpuscale::sim {
namespace {

using NodeId = DagExecutor::NodeId;

class KvstoreNcclBuild : public GradientExchangeBuild {
 public:
  // MXNet's NCCL kvstore operations hold the global GPU allocator mutex: one at a time.
  // `store_updates`: the framework's update_on_kvstore.
  KvstoreNcclBuild(ReplayGraph& graph, bool store_updates)
      : g_(graph), store_updates_(store_updates), nccl_ops_(graph.make_pool(1)) {}

  void gradient_ready(int key, const GradientReady& ready, ExchangeIteration& it) override {
    const auto t = static_cast<size_t>(key);
    const double bytes = g_.tensor_bytes()[t];
    const int calls = g_.ranks() > 1 ? g_.ranks() : 0;
    const double process_factor = g_.draws().process(0);
    std::vector<NodeId>& weights = it.weights[t];
    const NodeId reduced =
        g_.engine_op(nccl_ops_, process_factor, ready.computed, calls, calls, [&](NodeId start) {
          if (calls == 0) return start;
          return g_.append_collective("nccl_ring", bytes, 0, start, coll::Collective::Reduce);
        });
    if (g_.ranks() == 1) {
      // One GPU has no kvstore: it updates its weights in place (python/mxnet/model.py:78-80 at
      // 1.1.0), with nothing to copy back.
      weights[0] = g_.update_op(0, t, {reduced});
      it.updated(t);
      return;
    }
    // GPU0 updates and broadcasts the weights (update_on_kvstore), or broadcasts the summed
    // gradient, the same bytes, for every GPU to update its own (MXNET_UPDATE_ON_KVSTORE=0).
    const NodeId sent = store_updates_ ? g_.update_op(0, t, {reduced}) : reduced;
    const NodeId broadcast =
        g_.engine_op(nccl_ops_, process_factor, {sent}, calls, calls, [&](NodeId start) {
          return g_.append_collective("nccl_ring", bytes, 0, start,
                                      coll::Collective::Broadcast);
        });
    for (size_t r = 0; r < weights.size(); ++r) {
      weights[r] = store_updates_ ? broadcast : g_.update_op(static_cast<int>(r), t, {broadcast});
    }
    it.updated(t);
  }

 private:
  ReplayGraph& g_;
  bool store_updates_;
  HostThreadPool nccl_ops_;
};

class KvstoreNccl : public ExchangeMethod {
 public:
  using ExchangeMethod::ExchangeMethod;

  std::string describe() const override { return "kvstore=nccl per key"; }
  bool process_per_gpu() const override { return framework().execution.process_per_gpu; }

  std::vector<coll::Schedule> routed_schedules(ReplayGraph& graph) const override {
    std::vector<coll::Schedule> schedules;
    for (const std::string& algorithm : coll::algorithms_run_by("nccl_reduce_bcast")) {
      schedules.push_back(coll::build_schedule(algorithm, graph.request_for(1e6, 0)));
    }
    return schedules;
  }

  std::unique_ptr<GradientExchangeBuild> build(ReplayGraph& graph) const override {
    return std::make_unique<KvstoreNcclBuild>(graph, framework().update_on_kvstore);
  }

 protected:
  // ncclReduce into one merged array per key on GPU0 (src/kvstore/kvstore_nccl.h) [?], and
  // where GPU0 runs the optimizer, the weights and their state.
  wl::ExchangeBuffers buffers(const wl::WorkloadCosts& costs, const wl::PrecisionRecipe& precision,
                              int gpus) const override {
    wl::ExchangeBuffers out{framework().update_on_kvstore,
                            std::vector<double>(static_cast<size_t>(gpus), 0.0)};
    const double params = static_cast<double>(costs.params);
    out.bytes[0] += params * precision.gradient_bytes;
    if (out.optimizer_in_store) out.bytes[0] += params * stored_bytes_per_param(precision);
    return out;
  }

  // Per key a REDUCE, the update and a BROADCAST (without update_on_kvstore: the BROADCAST,
  // then the update), each NCCL call after the previous one (one operation at a time under the
  // allocator's mutex).
  void export_exchange(ExchangeTrace& trace) const override {
    const bool store_updates = framework().update_on_kvstore;
    int previous = -1;
    for (const ExchangeTrace::Gradient& g : trace.gradients()) {
      std::vector<int> deps = g.ready;
      if (previous >= 0) deps.push_back(previous);
      const int reduced = trace.collective(fmt::format("reduce {}", trace.name_of(g)),
                                           wl::Collective::Reduce, trace.bytes_of(g), deps);
      const int sent = store_updates ? trace.update(g, {reduced}) : reduced;
      previous = trace.collective(fmt::format("broadcast {}", trace.name_of(g)),
                                  wl::Collective::Broadcast, trace.bytes_of(g), {sent});
      if (!store_updates) trace.update(g, {previous});
    }
  }
};

}  // namespace

std::unique_ptr<ExchangeMethod> make_kvstore_nccl(ExchangeSettings settings) {
  return std::make_unique<KvstoreNccl>(std::move(settings));
}

}  // namespace gpuscale::sim
