// PyTorch DistributedDataParallel's buckets (>= 1.6): static buckets over the gradients in the
// order they become ready, the first closed at `first_bucket` bytes, the others at `buffer` (a
// bucket closes once it reaches its limit); each allreduced once all its gradients are ready,
// strictly in bucket order (Reducer::mark_bucket_ready, torch/csrc/distributed/c10d/
// reducer.cpp:514-543 at v1.6.0) on one NCCL stream. Every gradient is copied into its bucket
// (:319) and back once reduced (the finalize step), bucket of one or not. From v1.6 the buckets
// are rebuilt after the first iteration in the order gradients arrive (reducer.cpp:1003-1028).
#include <fmt/format.h>

#include "sim/exchange/allreduce_method.hpp"
#include "sim/exchange/methods.hpp"

namespace gpuscale::sim {
namespace {

class DdpBucketsBuild : public AllreduceBuild {
 public:
  DdpBucketsBuild(ReplayGraph& graph, const ExchangeSettings& settings, bool after_every_exchange)
      : AllreduceBuild(graph, settings.algorithm, after_every_exchange),
        model_(settings.allreduce) {}

 protected:
  // Tensor `key` joins the open bucket; the bucket closes once it holds its limit. A latch
  // released when the bucket has been allreduced. The hook that hands a gradient over launches a
  // full bucket's allreduce on the host, but NCCL's stream waits on the GPU for the stream that
  // computes the gradients (ProcessGroupNCCL's syncStreams, torch/lib/c10d at v1.6.0), so the
  // allreduce starts once they are computed.
  NodeId reduce(int key, NodeId ready, const std::vector<NodeId>& /*handed_over*/) override {
    const NodeId latch = g_.dag().add_latch();
    open_.latches.push_back(latch);
    open_.ready.push_back(ready);
    open_.bytes += g_.tensor_bytes()[static_cast<size_t>(key)];
    if (open_.bytes >= model_.bucket_limit_bytes(closed_)) close_bucket();
    return latch;
  }
  // The iteration's last bucket, partly filled; the next iteration's first is the first again.
  void close_iteration() override {
    close_bucket();
    closed_ = 0;
  }

 private:
  // The open bucket's allreduce, once all its gradients are ready and the previous bucket's is
  // done.
  void close_bucket() {
    if (open_.latches.empty()) return;
    std::vector<NodeId> deps = open_.ready;
    if (last_on_stream_ >= 0) deps.push_back(last_on_stream_);
    last_on_stream_ = flat_buffer_allreduce(open_.bytes, g_.join(deps));
    for (NodeId latch : open_.latches) {
      g_.dag().on_done(last_on_stream_, [this, latch](double) { g_.dag().release(latch); });
    }
    open_ = {};
    ++closed_;
  }

  struct Bucket {
    std::vector<NodeId> latches, ready;
    double bytes = 0;
  };
  wl::AllreduceModel model_;
  Bucket open_;
  int closed_ = 0;  // the iteration's buckets closed so far
};

class DdpBuckets : public AllreduceMethod {
 public:
  using AllreduceMethod::AllreduceMethod;

  std::string describe() const override {
    return fmt::format("ddp buckets of {:.4g} MiB", settings().allreduce.buffer.value / (1 << 20));
  }

  std::unique_ptr<GradientExchangeBuild> build(ReplayGraph& graph) const override {
    return std::make_unique<DdpBucketsBuild>(graph, settings(), updates_after_every_exchange());
  }

 protected:
  // DDP keeps every gradient a second time, in its buckets' flat buffers (torch/csrc/
  // distributed/c10d/reducer.cpp:503-504 at v1.5.0).
  wl::ExchangeBuffers buffers(const wl::WorkloadCosts& costs, const wl::PrecisionRecipe& precision,
                              int gpus) const override {
    const double param_bytes = static_cast<double>(costs.params) * precision.gradient_bytes;
    return {false, std::vector<double>(static_cast<size_t>(gpus), param_bytes)};
  }
  std::vector<std::vector<int>> static_groups(const std::vector<double>& bytes) const override {
    const wl::AllreduceModel& model = settings().allreduce;
    std::vector<std::vector<int>> groups;
    double held = 0;
    bool open = false;  // the last bucket takes more tensors
    for (size_t t = 0; t < bytes.size(); ++t) {
      if (!open) {
        groups.emplace_back();
        held = 0;
      }
      groups.back().push_back(static_cast<int>(t));
      held += bytes[t];
      open = held < model.bucket_limit_bytes(static_cast<int>(groups.size()) - 1);
    }
    return groups;
  }
  bool flat_buffer(size_t /*tensors*/) const override { return true; }
  std::string group_name(size_t k, size_t tensors, const std::string& /*tensor*/) const override {
    return fmt::format("bucket {} ({} tensors)", k, tensors);
  }
};

}  // namespace

std::unique_ptr<ExchangeMethod> make_ddp_buckets(ExchangeSettings settings) {
  return std::make_unique<DdpBuckets>(std::move(settings));
}

}  // namespace gpuscale::sim
