// One allreduce per tensor, as soon as its gradient is ready, one after another on the
// communication stream: Horovod with HOROVOD_FUSION_THRESHOLD=0, DDP with bucket_cap_mb=0, or a
// framework's allreduce with `--fusion-mb 0` (an allreduce buffer of 0 bytes).
#include "sim/exchange/allreduce_method.hpp"
#include "sim/exchange/methods.hpp"

namespace gpuscale::sim {
namespace {

class PerTensorBuild : public AllreduceBuild {
 public:
  using AllreduceBuild::AllreduceBuild;

 protected:
  // Each allreduce starts once its gradient is computed (Horovod's thread polls its ready event,
  // DDP's stream waits for it) and the one before it is done.
  NodeId reduce(int key, NodeId ready, const std::vector<NodeId>& /*handed_over*/) override {
    NodeId start = ready;
    if (last_on_stream_ >= 0) start = g_.join({ready, last_on_stream_});
    return last_on_stream_ = allreduce(g_.tensor_bytes()[static_cast<size_t>(key)], start);
  }
};

class PerTensorAllreduce : public AllreduceMethod {
 public:
  using AllreduceMethod::AllreduceMethod;

  std::string describe() const override { return "one allreduce per tensor"; }

  std::unique_ptr<GradientExchangeBuild> build(ReplayGraph& graph) const override {
    return std::make_unique<PerTensorBuild>(graph, settings().algorithm,
                                            updates_after_every_exchange());
  }

 protected:
  // DDP still copies every gradient into a bucket of its own (torch/csrc/distributed/c10d/
  // reducer.cpp:503-504 at v1.5.0); Horovod reduces each tensor in place.
  wl::ExchangeBuffers buffers(const wl::WorkloadCosts& costs, const wl::PrecisionRecipe& precision,
                              int gpus) const override {
    const bool buckets = framework().allreduce.grouping == wl::AllreduceGrouping::Buckets;
    const double per_gpu = buckets ? static_cast<double>(costs.params) * precision.gradient_bytes : 0.0;
    return {false, std::vector<double>(static_cast<size_t>(gpus), per_gpu)};
  }
  std::vector<std::vector<int>> static_groups(const std::vector<double>& bytes) const override {
    std::vector<std::vector<int>> groups;
    for (size_t t = 0; t < bytes.size(); ++t) groups.push_back({static_cast<int>(t)});
    return groups;
  }
  bool flat_buffer(size_t /*tensors*/) const override { return false; }
  std::string group_name(size_t /*k*/, size_t /*tensors*/,
                         const std::string& tensor) const override {
    return tensor;
  }
};

}  // namespace

std::unique_ptr<ExchangeMethod> make_per_tensor_allreduce(ExchangeSettings settings) {
  return std::make_unique<PerTensorAllreduce>(std::move(settings));
}

}  // namespace gpuscale::sim
