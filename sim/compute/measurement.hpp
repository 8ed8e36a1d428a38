// What every file of the calibration tool records about where and how it measured: the GPU, the
// software stack, the method, and the machine's microbenchmarks. Shared by measured per-layer
// profiles (profile.hpp) and measured DeepBench shapes (calibration/src/deepbench_measurements.hpp).
// Format: docs/calibration.md#the-measurement-header.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topologies/core/error.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale {
class MapReader;
}

namespace gpuscale::compute {

// The device as the CUDA runtime describes it (cudaGetDeviceProperties, nvidia-smi's clocks).
struct MeasuredGpu {
  std::string name;                // "NVIDIA H200"
  std::string compute_capability;  // "9.0"
  int sm_count = 0;
  Hertz sm_clock;                  // the maximum (boost) clock the driver reports
  Hertz memory_clock;
  Bytes memory;                    // total device memory
};

// One pair of GPUs of the measuring machine, when it has several.
struct PeerLink {
  int from = 0;
  int to = 0;
  bool peer_access = false;   // cudaDeviceCanAccessPeer
  BytesPerSecond bandwidth;   // a large cudaMemcpyPeerAsync
  Seconds latency;            // a 4-byte cudaMemcpyPeerAsync
};

// A cost the host pays, on its wall clock: the median of the timed runs, per call, and their
// interquartile range.
struct HostCallTime {
  Seconds median;
  Seconds spread;
};

// Issuing a 4 KiB copy between GPUs, as a framework's copy worker does: a cudaMemcpyPeerAsync to
// a peer GPU, or, where no two GPUs have peer access, a cudaMemcpyAsync device to device on one.
struct CopyIssue {
  bool peer = false;
  HostCallTime issue;       // the call alone
  HostCallTime round_trip;  // the call, then cudaStreamSynchronize
};

// Figures that let a profile be carried to another GPU and that the replay's reductions and
// updates can use (docs/calibration.md#microbenchmarks).
struct Microbenchmarks {
  Seconds launch_overhead;              // per kernel: an empty kernel launched back to back
  BytesPerSecond device_copy_bandwidth; // cudaMemcpy device-to-device: bytes read + written / s
  BytesPerSecond host_to_device;        // pinned host memory
  BytesPerSecond device_to_host;        // pinned host memory
  std::vector<PeerLink> peers;          // empty on a one-GPU machine
  // What the host model's threads pay to issue GPU work and wait for it
  // (docs/calibration.md#host-side-costs); absent in files written before the tool measured them.
  std::optional<HostCallTime> launch;       // per empty kernel, one cudaStreamSynchronize per 20
  std::optional<HostCallTime> launch_sync;  // per empty kernel, each followed by a sync
  std::optional<HostCallTime> event_record; // one cudaEventRecord
  std::optional<CopyIssue> peer_copy_issue;
  std::optional<HostCallTime> host_sync_d2h;  // a blocking 4-byte cudaMemcpy device to host

  // What a sync after every kernel adds per kernel, launch_sync - launch, when both are measured;
  // derived, not stored, so it cannot disagree with them.
  std::optional<Seconds> sync_round_trip() const;
};

struct MeasurementHeader {
  std::string gpu;                  // the GPU model, as topology files write it ("H200-SXM")
  Origin gpu_origin;                // where the file names it; empty for a header built in code
  std::optional<MeasuredGpu> gpu_details;
  std::string driver;               // NVIDIA driver version
  std::string cuda;                 // CUDA runtime version
  std::string cudnn;                // cuDNN version
  std::string cublas;               // cuBLAS version; "" when not recorded
  std::string framework;            // what ran the layers ("gpuscale-calibrate 0.1 (cuDNN, cuBLAS)")
  std::string date;                 // ISO 8601 day of the measurement; "" when not recorded
  std::string method;               // "3 warm-up runs, median of 20 timed by CUDA events; ..."
  std::string source;               // who measured, where; "" when not recorded
  std::optional<Microbenchmarks> microbenchmarks;
};

// The keys a header adds to the top-level mapping of its file.
std::vector<std::string> measurement_header_keys();

// Reads the header from a file's top-level mapping, whose reader allows measurement_header_keys()
// besides the file's own keys. Strict, as every gpuscale file: ConfigError with FILE:LINE.
MeasurementHeader read_measurement_header(const MapReader& top);

// The header as top-level YAML lines, each ending in a newline; read_measurement_header reads
// them back to an equal header (times to 1 ns, bandwidths to 1 MB/s, clocks to 1 kHz).
std::string measurement_header_to_yaml(const MeasurementHeader& header);

}  // namespace gpuscale::compute
