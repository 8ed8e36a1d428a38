// What every file of the calibration tool records about where and how it measured: the GPU, the
// software stack, the method, and the machine's microbenchmarks. Shared by measured per-layer
// profiles (profile.hpp) and measured DeepBench shapes (calibration/src/deepbench_measurements.hpp).
// Format: docs/calibration.md#the-measurement-header.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

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

// Figures that let a profile be carried to another GPU and that the replay's reductions and
// updates can use (docs/calibration.md#microbenchmarks).
struct Microbenchmarks {
  Seconds launch_overhead;              // per kernel: an empty kernel launched back to back
  BytesPerSecond device_copy_bandwidth; // cudaMemcpy device-to-device: bytes read + written / s
  BytesPerSecond host_to_device;        // pinned host memory
  BytesPerSecond device_to_host;        // pinned host memory
  std::vector<PeerLink> peers;          // empty on a one-GPU machine
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
