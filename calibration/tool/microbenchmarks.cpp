#include "calibration/tool/microbenchmarks.hpp"

#include <utility>

#include "calibration/tool/cuda_status.hpp"
#include "calibration/tool/kernels.hpp"

namespace gpuscale::calib {
namespace {

constexpr int kLaunches = 1000;               // empty kernels per timed run
constexpr std::size_t kCopyBytes = 1ull << 30;  // far beyond any L2 cache
constexpr std::size_t kHostCopyBytes = 256ull << 20;

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
      if (link.peer_access) {
        GS_CUDA(cudaSetDevice(from));
        const cudaError_t enabled = cudaDeviceEnablePeerAccess(to, 0);
        if (enabled != cudaErrorPeerAccessAlreadyEnabled) GS_CUDA(enabled);
        GS_CUDA(cudaSetDevice(ctx.device()));
      }
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

}  // namespace

compute::Microbenchmarks run_microbenchmarks(GpuContext& ctx, const TimingMethod& timing) {
  compute::Microbenchmarks m;
  m.launch_overhead.value = launch_overhead(ctx, timing);
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
