// Per-layer times of one workload at several batch sizes: the network's activations, their
// gradients and every layer's parameters are allocated as a framework without memory sharing
// holds them through an iteration, so a batch that does not fit fails as training would (and is
// recorded, not fatal); then each pass of each layer is timed in place.
#pragma once

#include <cstddef>
#include <vector>

#include "calibration/tool/gpu_context.hpp"
#include "calibration/tool/timing.hpp"
#include "sim/compute/profile.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::calib {

struct NetworkProfileOptions {
  std::vector<long> batches;
  // Also find and time the largest batch whose buffers fit; the next one up is then listed as
  // out of memory (the study's "maximum batch size").
  bool largest_that_fits = false;
  TimingMethod timing;
  std::size_t workspace_bytes = 0;  // the most a convolution algorithm may use
};

struct NetworkProfile {
  std::vector<compute::LayerProfile> layers;  // every layer but the input, in forward order
  std::vector<long> out_of_memory_batches;
};

NetworkProfile profile_network(GpuContext& ctx, const wl::Workload& workload,
                               const wl::WorkloadCosts& costs,
                               const NetworkProfileOptions& options);

}  // namespace gpuscale::calib
