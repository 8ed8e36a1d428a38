#include "calibration/tool/microbenchmarks.hpp"

#include <functional>
#include <optional>
#include <utility>

#include "calibration/tool/cuda_status.hpp"
#include "calibration/tool/kernels.hpp"

namespace gpuscale::calib {
namespace {

constexpr int kLaunches = 1000;               // empty kernels per timed run
constexpr std::size_t kCopyBytes = 1ull << 30;  // far beyond any L2 cache
constexpr std::size_t kHostCopyBytes = 256ull << 20;
// Host-side costs: calls per timed run, far above the host clock's resolution and few enough
// that no call waits for room in the stream's queue.
constexpr int kHostCalls = 100;
// As NVIDIA's CUDA Graphs blog times launches (3.8 us per kernel on a V100).
constexpr int kLaunchesPerSync = 20;
static_assert(kHostCalls % kLaunchesPerSync == 0, "every run ends with a sync");
constexpr std::size_t kSmallCopyBytes = 4096;

// Page-locked host memory, as frameworks stage copies through.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes) { GS_CUDA(cudaMallocHost(&data_, bytes)); }
  ~PinnedBuffer() { cudaFreeHost(data_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

double launch_overhead(GpuContext& ctx, const TimingMethod& timing) {
  const Timing t = time_on_stream(
      ctx, [&] { for (int i = 0; i < kLaunches; ++i) launch_empty_kernel(ctx.stream()); },
      timing);
  GS_CUDA(cudaGetLastError());
  return t.median / kLaunches;
}

// Bytes per second of one cudaMemcpyAsync of `bytes` (counted once).
double copy_rate(GpuContext& ctx, const TimingMethod& timing, void* dst, const void* src,
                 std::size_t bytes, cudaMemcpyKind kind) {
  const Timing t = time_on_stream(
      ctx, [&] { GS_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, ctx.stream())); }, timing);
  return static_cast<double>(bytes) / t.median;
}

// Lets `from` address `to`'s memory (NVLink or PCIe peer to peer); ctx's device stays current.
void enable_peer_access(const GpuContext& ctx, int from, int to) {
  GS_CUDA(cudaSetDevice(from));
  const cudaError_t enabled = cudaDeviceEnablePeerAccess(to, 0);
  if (enabled == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // not an error here; a later cudaGetLastError would report it
  } else {
    GS_CUDA(enabled);
  }
  GS_CUDA(cudaSetDevice(ctx.device()));
}

std::vector<compute::PeerLink> peer_links(GpuContext& ctx, const TimingMethod& timing) {
  int count = 0;
  GS_CUDA(cudaGetDeviceCount(&count));
  std::vector<compute::PeerLink> links;
  if (count < 2) return links;
  std::vector<DeviceBuffer> buffers;
  for (int d = 0; d < count; ++d) {
    GS_CUDA(cudaSetDevice(d));
    buffers.emplace_back(kHostCopyBytes);
  }
  GS_CUDA(cudaSetDevice(ctx.device()));
  for (int from = 0; from < count; ++from) {
    for (int to = 0; to < count; ++to) {
      if (from == to) continue;
      compute::PeerLink link{from, to, false, {}, {}};
      int can = 0;
      GS_CUDA(cudaDeviceCanAccessPeer(&can, from, to));
      link.peer_access = can != 0;
      if (link.peer_access) enable_peer_access(ctx, from, to);
      const auto peer_copy = [&](std::size_t bytes) {
        return [&, bytes] {
          GS_CUDA(cudaMemcpyPeerAsync(buffers[to].get(), to, buffers[from].get(), from, bytes,
                                      ctx.stream()));
        };
      };
      link.bandwidth.value =
          static_cast<double>(kHostCopyBytes) /
          time_on_stream(ctx, peer_copy(kHostCopyBytes), timing).median;
      link.latency.value = time_on_stream(ctx, peer_copy(4), timing).median;
      links.push_back(link);
    }
  }
  return links;
}

compute::HostCallTime host_call_time(const Timing& t) { return {{t.median}, {t.spread}}; }

// Host wall time per call of `call`, made kHostCalls times in each run; `settle` as
// time_on_host's.
compute::HostCallTime per_call(const std::function<void()>& call, const TimingMethod& timing,
                               const std::function<void()>& settle = [] {}) {
  const auto run = [&] {
    for (int i = 0; i < kHostCalls; ++i) call();
  };
  return host_call_time(time_on_host(kHostCalls, run, timing, settle));
}

// Host wall time per empty kernel launched back to back, with a cudaStreamSynchronize, counted,
// after every `per_sync` launches.
compute::HostCallTime launch_time(GpuContext& ctx, const TimingMethod& timing, int per_sync) {
  const auto run = [&] {
    for (int i = 1; i <= kHostCalls; ++i) {
      launch_empty_kernel(ctx.stream());
      if (i % per_sync == 0) ctx.synchronize();
    }
  };
  const Timing t = time_on_host(kHostCalls, run, timing);
  GS_CUDA(cudaGetLastError());
  return host_call_time(t);
}

// An event without timing, as frameworks record to order work across streams.
compute::HostCallTime event_record_time(GpuContext& ctx, const TimingMethod& timing) {
  cudaEvent_t event = nullptr;
  GS_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  const compute::HostCallTime t = per_call(
      [&] { GS_CUDA(cudaEventRecord(event, ctx.stream())); }, timing, [&] { ctx.synchronize(); });
  cudaEventDestroy(event);
  return t;
}

// The first GPU that ctx's GPU can access as a peer, if any.
std::optional<int> peer_of(const GpuContext& ctx) {
  int count = 0;
  GS_CUDA(cudaGetDeviceCount(&count));
  for (int d = 0; d < count; ++d) {
    int can = 0;
    if (d != ctx.device()) GS_CUDA(cudaDeviceCanAccessPeer(&can, ctx.device(), d));
    if (can != 0) return d;
  }
  return std::nullopt;
}

compute::CopyIssue copy_issue(GpuContext& ctx, const TimingMethod& timing) {
  const std::optional<int> peer = peer_of(ctx);
  DeviceBuffer from(kSmallCopyBytes), to;
  if (peer) {
    enable_peer_access(ctx, ctx.device(), *peer);
    GS_CUDA(cudaSetDevice(*peer));
    to = DeviceBuffer(kSmallCopyBytes);
    GS_CUDA(cudaSetDevice(ctx.device()));
  } else {
    to = DeviceBuffer(kSmallCopyBytes);
  }
  const auto copy = [&] {
    if (peer) {
      GS_CUDA(cudaMemcpyPeerAsync(to.get(), *peer, from.get(), ctx.device(), kSmallCopyBytes,
                                  ctx.stream()));
    } else {
      GS_CUDA(cudaMemcpyAsync(to.get(), from.get(), kSmallCopyBytes, cudaMemcpyDeviceToDevice,
                              ctx.stream()));
    }
  };
  const auto copy_and_sync = [&] {
    copy();
    ctx.synchronize();
  };
  return {peer.has_value(), per_call(copy, timing, [&] { ctx.synchronize(); }),
          per_call(copy_and_sync, timing)};
}

// A blocking cudaMemcpy of one float into pageable memory: what MXNet's metric pays per batch
// and GPU when asnumpy() copies an output into a NumPy array.
compute::HostCallTime host_sync_d2h_time(const TimingMethod& timing) {
  DeviceBuffer value(sizeof(float));
  float host = 0;
  return per_call(
      [&] {
        GS_CUDA(cudaMemcpy(&host, value.get(), sizeof host, cudaMemcpyDeviceToHost));
      },
      timing);
}

}  // namespace

compute::Microbenchmarks run_microbenchmarks(GpuContext& ctx, const TimingMethod& timing) {
  compute::Microbenchmarks m;
  m.launch_overhead.value = launch_overhead(ctx, timing);
  m.launch = launch_time(ctx, timing, kLaunchesPerSync);
  m.launch_sync = launch_time(ctx, timing, 1);
  m.event_record = event_record_time(ctx, timing);
  m.peer_copy_issue = copy_issue(ctx, timing);
  m.host_sync_d2h = host_sync_d2h_time(timing);
  {
    DeviceBuffer a(kCopyBytes), b(kCopyBytes);
    // A device-to-device copy reads and writes every byte.
    m.device_copy_bandwidth.value =
        2 * copy_rate(ctx, timing, b.get(), a.get(), kCopyBytes, cudaMemcpyDeviceToDevice);
  }
  {
    DeviceBuffer device(kHostCopyBytes);
    PinnedBuffer host(kHostCopyBytes);
    m.host_to_device.value = copy_rate(ctx, timing, device.get(), host.get(), kHostCopyBytes,
                                       cudaMemcpyHostToDevice);
    m.device_to_host.value = copy_rate(ctx, timing, host.get(), device.get(), kHostCopyBytes,
                                       cudaMemcpyDeviceToHost);
  }
  m.peers = peer_links(ctx, timing);
  return m;
}

}  // namespace gpuscale::calib
