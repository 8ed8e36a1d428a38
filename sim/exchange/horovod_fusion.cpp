// Horovod's tensor fusion (<= 0.20; horovod/horovod tag v0.19.1): a background thread wakes every
// `cycle` (HOROVOD_CYCLE_TIME, 5 ms), packs the gradients handed to it since, in the order they
// came, into buffers of at most `buffer` bytes (HOROVOD_FUSION_THRESHOLD, 64 MiB; a larger tensor
// alone) and allreduces them one after another. A buffer of more than one tensor is copied in and
// out tensor by tensor (horovod/common/ops/collective_operations.cc:37-67), a lone tensor is
// reduced in place (ops/nccl_operations.cc:109-158).
//
// The thread. A gradient reaches its queue when the framework's host hands it over
// (GradientReady): in PyTorch once backward's kernels for it are issued, long before the GPU has
// run them, so a whole backward is handed over within a cycle or two and fills 64 MiB buffers, as
// the EDSR/Lassen slides' profile of Horovod 0.19.1 says ("most messages are near 64MB"). Before a
// buffer's allreduce the thread polls each of its tensors' ready event on the host
// (common/operations.cc:265-285, PerformOperation): a buffer starts once its last gradient is
// computed on every GPU and the thread is done with the buffer before it. The thread is free
// again once it has queued the allreduce on its stream; a finalizer thread waits for the end
// (ops/gpu_operations.cc:47-83). The next cycle starts a cycle after this one started, or when
// the thread is free if that is later (RunLoopOnce, common/operations.cc:539-549). With a cycle
// of 0 the thread loops without sleeping: the gradients handed over while it was busy go out
// together as soon as it is free, and one handed over while it idles goes at once.
//
// Coordination (`--without coordination` leaves it out). Before a cycle's allreduces the ranks
// agree on which tensors all of them have ready. With the response cache on (the default,
// capacity 1024: common/global_state.h:88) and every tensor cached, as from the second
// iteration, that is one MPI_Allreduce(MPI_BAND) of a bit vector, one bit per cache entry and
// 3 status bits in 64-bit words (common/response_cache.cc:339-465, mpi/mpi_controller.cc:87-95):
// 136 bytes for 1024 entries. MVAPICH2 reduces so small a message by recursive doubling over the
// nodes (allreduce_osu.c:2410-2416 at 2.3); it runs here as recursive doubling's messages over the
// ranks' routes, the AND of each step on the host costing nothing.
// Not modelled: the first iteration's path through rank 0 (MPI_Gather of every rank's requests,
// MPI_Bcast of the responses), which a cache miss takes, nor more than 1024 tensors, which evict
// each other every cycle (docs/scale-mechanisms.md §1).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "sim/collectives/registry.hpp"
#include "sim/exchange/allreduce_method.hpp"
#include "sim/exchange/methods.hpp"

namespace gpuscale::sim {
namespace {

class HorovodFusionBuild : public AllreduceBuild {
 public:
  HorovodFusionBuild(ReplayGraph& graph, const ExchangeSettings& settings,
                     bool after_every_exchange)
      : AllreduceBuild(graph, settings.algorithm, after_every_exchange),
        model_(settings.allreduce) {}

  // The background thread's first cycle, once every iteration's gradients are in the graph.
  void end_run() override {
    if (latches_.empty() || !on_a_cycle()) return;
    g_.dag().on_done(cycle_timer(), [this](double) { tick(); });
  }

 protected:
  // A latch released when the fused buffer holding tensor `key` has been allreduced; the tensor
  // joins the fusion queue once it is `handed_over`, and its buffer waits until it is `computed`.
  NodeId reduce(int key, NodeId computed, const std::vector<NodeId>& handed_over) override {
    const NodeId latch = g_.dag().add_latch();
    latches_.push_back(latch);
    tensor_.push_back(key);
    computed_.push_back(computed);
    const int index = static_cast<int>(latches_.size()) - 1;
    g_.dag().on_done(g_.join(handed_over), [this, index](double) {
      queue_.push_back(index);
      if (!on_a_cycle() && !busy_) loop_without_sleeping();
    });
    return latch;
  }

 private:
  bool on_a_cycle() const { return model_.cycle.value > 0; }

  // A delay of one cycle, from now.
  NodeId cycle_timer() {
    return g_.dag().add({DagExecutor::Kind::Delay, nullptr, model_.cycle.value, {}, 0, 0}, {});
  }

  // A cycle: the next starts a cycle from now, or once this one's buffers are queued.
  void tick() {
    take_the_queue();
    if (taken_ == static_cast<int>(latches_.size())) return;
    const NodeId timer = cycle_timer();
    const NodeId next = thread_free_ >= 0 ? g_.join({timer, thread_free_}) : timer;
    g_.dag().on_done(next, [this](double) { tick(); });
  }

  // With a cycle of 0: one pass of the loop, and the next as soon as the thread is free, if
  // anything was handed over meanwhile.
  void loop_without_sleeping() {
    take_the_queue();
    busy_ = true;
    g_.dag().on_done(thread_free_, [this](double) {
      busy_ = false;
      if (!queue_.empty()) loop_without_sleeping();
    });
  }

  // What is queued, negotiated (coordination) and then packed into buffers, in queued order,
  // allreduced one after another.
  void take_the_queue() {
    if (queue_.empty()) return;
    std::vector<int> ready;
    ready.swap(queue_);
    taken_ += static_cast<int>(ready.size());
    std::vector<NodeId> negotiated;
    if (g_.setup().mechanisms.coordination) {
      negotiated.push_back(g_.append_schedule(negotiation(), g_.join({})));
    }
    launch(ready, negotiated);
  }

  // The negotiation as MPI runs it on the host: recursive doubling's messages over the ranks'
  // routes, each step's AND of a few words on the CPU taking no measurable time (no GPU kernel).
  // Built once: every cycle of every iteration negotiates alike.
  const coll::Schedule& negotiation() {
    if (negotiation_) return *negotiation_;
    coll::Schedule& s = negotiation_.emplace(
        g_.schedule_for("recursive_doubling", cache_bits_bytes(), 0));
    for (coll::Op& op : s.ops) {
      if (op.kind == coll::Op::Kind::Reduce) op = {.kind = coll::Op::Kind::Delay, .deps = op.deps};
    }
    return s;
  }

  // The response cache's bit vector: one bit per cached tensor (every gradient tensor of the
  // model, up to the capacity) and 3 status bits, in 64-bit words.
  double cache_bits_bytes() const {
    constexpr int kCacheCapacity = 1024, kStatusBits = 3, kWordBits = 64;
    const int entries = std::min(static_cast<int>(g_.tensor_bytes().size()), kCacheCapacity);
    return 8.0 * ((entries + kStatusBits + kWordBits - 1) / kWordBits);
  }

  // The gradients `ready`, in order, packed into buffers, each allreduced once the thread has
  // seen its gradients computed (after `negotiated`), and after the one before it on the stream.
  void launch(const std::vector<int>& ready, const std::vector<NodeId>& negotiated) {
    auto bytes_of = [this](int index) {
      return g_.tensor_bytes()[static_cast<size_t>(tensor_[static_cast<size_t>(index)])];
    };
    size_t i = 0;
    while (i < ready.size()) {
      double bytes = 0;
      std::vector<int> buffer;
      std::vector<NodeId> polled = negotiated;
      if (thread_free_ >= 0) polled.push_back(thread_free_);
      while (i < ready.size() && model_.joins_fusion_buffer(static_cast<int>(buffer.size()), bytes,
                                                            bytes_of(ready[i]))) {
        bytes += bytes_of(ready[i]);
        polled.push_back(computed_[static_cast<size_t>(ready[i])]);
        buffer.push_back(ready[i++]);
      }
      thread_free_ = g_.join(polled);
      const NodeId start =
          last_on_stream_ >= 0 ? g_.join({thread_free_, last_on_stream_}) : thread_free_;
      last_on_stream_ =
          buffer.size() > 1 ? flat_buffer_allreduce(bytes, start) : allreduce(bytes, start);
      for (int index : buffer) {
        const NodeId latch = latches_[static_cast<size_t>(index)];
        g_.dag().on_done(last_on_stream_, [this, latch](double) { g_.dag().release(latch); });
      }
    }
  }

  wl::AllreduceModel model_;
  std::optional<coll::Schedule> negotiation_;
  std::vector<NodeId> latches_;   // [index]: released once its tensor's buffer is allreduced
  std::vector<int> tensor_;       // [index]: the tensor
  std::vector<NodeId> computed_;  // [index]: its gradient computed on every GPU
  std::vector<int> queue_;        // indices handed over, not yet taken by the thread
  NodeId thread_free_ = -1;       // the thread has queued its last buffer's allreduce; -1: idle
  bool busy_ = false;             // the thread is between taking the queue and being free (cycle 0)
  int taken_ = 0;                 // indices taken from the queue
};

class HorovodFusion : public AllreduceMethod {
 public:
  using AllreduceMethod::AllreduceMethod;

  std::string describe() const override {
    const wl::AllreduceModel& model = settings().allreduce;
    const std::string buffer = fmt::format("{:.4g} MiB", model.buffer.value / (1 << 20));
    if (model.cycle.value > 0) {
      return fmt::format("horovod fusion {} every {:g} ms", buffer, model.cycle.value * 1e3);
    }
    return fmt::format("horovod fusion {} with no cycle", buffer);
  }

  std::unique_ptr<GradientExchangeBuild> build(ReplayGraph& graph) const override {
    return std::make_unique<HorovodFusionBuild>(graph, settings(), updates_after_every_exchange());
  }

  // The negotiation's messages travel between the ranks too (HorovodFusionBuild::negotiation).
  std::vector<coll::Schedule> routed_schedules(ReplayGraph& graph) const override {
    std::vector<coll::Schedule> schedules = AllreduceMethod::routed_schedules(graph);
    if (graph.setup().mechanisms.coordination) {
      schedules.push_back(coll::build_schedule("recursive_doubling", graph.request_for(8, 0)));
    }
    return schedules;
  }

 protected:
  // One fusion buffer per GPU, allocated at full size (horovod/common/fusion_buffer_manager.cc:
  // 21-45 at v0.19.1).
  wl::ExchangeBuffers buffers(const wl::WorkloadCosts& /*costs*/,
                              const wl::PrecisionRecipe& /*precision*/, int gpus) const override {
    return {false,
            std::vector<double>(static_cast<size_t>(gpus), settings().allreduce.buffer.value)};
  }
  // Packed as if every gradient reached the fusion queue in one cycle (the replay packs what
  // each cycle finds ready, which depends on time: these are the fewest, largest buffers).
  std::vector<std::vector<int>> static_groups(const std::vector<double>& bytes) const override {
    const wl::AllreduceModel& model = settings().allreduce;
    std::vector<std::vector<int>> groups;
    double held = 0;
    for (size_t t = 0; t < bytes.size(); ++t) {
      if (groups.empty() ||
          !model.joins_fusion_buffer(static_cast<int>(groups.back().size()), held, bytes[t])) {
        groups.emplace_back();
        held = 0;
      }
      groups.back().push_back(static_cast<int>(t));
      held += bytes[t];
    }
    return groups;
  }
  bool flat_buffer(size_t tensors) const override { return tensors > 1; }
  std::string group_name(size_t k, size_t tensors, const std::string& tensor) const override {
    return tensors == 1 ? tensor : fmt::format("buffer {} ({} tensors)", k, tensors);
  }
};

}  // namespace

std::unique_ptr<ExchangeMethod> make_horovod_fusion(ExchangeSettings settings) {
  return std::make_unique<HorovodFusion>(std::move(settings));
}

}  // namespace gpuscale::sim
