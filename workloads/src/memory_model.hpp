// Memory per GPU of data-parallel training (docs/memory-model.md):
//   context + weights + gradients + optimizer state + activations kept for backward (x batch)
//   + cuDNN workspace + the buffers of the gradient exchange + those of an input pipeline that
//   decodes on the GPU,
// each at the dtypes of the workload's precision recipe (its framework's): weights and their
// 16-bit casts, gradients and FP32 master gradients, optimizer state with FP32 master weights.
// The exchange's buffers make GPUs differ (ExchangeBuffers, as the exchange method says): with
// MXNet's kvstore=device each reducing GPU holds a copy of every other GPU's gradient for its
// keys; the study saw GPU0 use up to 41% more.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "workloads/src/framework.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::wl {

// What the gradient exchange keeps on each GPU (sim/exchange: each method says its own).
struct ExchangeBuffers {
  // The store that exchanges the gradients also runs the optimizer (MXNet's kvstore with
  // update_on_kvstore): the GPUs' replicas keep no optimizer state, the store's buffers hold it.
  bool optimizer_in_store = false;
  std::vector<double> bytes;  // per GPU, GPU0 first; empty: none
};

struct MemoryOptions {
  int batch = 1;  // per GPU
  int gpus = 1;
  ExchangeBuffers exchange{};
  // The cuDNN workspace at a per-GPU batch, as the compute model plans the convolutions'
  // algorithms (sim::workspace_of); none: no workspace.
  std::function<double(int batch)> workspace_bytes{};
  // Spatial parallelism: the halo elements per sample a GPU keeps with its blocks until
  // backward (kept_halo_elements_per_sample); they count with the activations.
  double halo_elements_per_sample = 0;
  // Decoding on the GPU (the framework's input.on_gpu): a stored image's mean pixels, which the
  // decoder writes as RGB before the sample is cut from it; 0: the dataset has no images to
  // decode, and the pipeline no buffers.
  double decoded_image_pixels = 0;
};

// Bytes per part on one GPU.
struct MemoryParts {
  double context = 0;
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double workspace = 0;
  double exchange = 0;
  double input = 0;  // decoding on the GPU: the decoder's buffers and the prefetched batches

  double total() const {
    return context + weights + gradients + optimizer + activations + workspace + exchange + input;
  }

  // Before the first iteration: the context, the weights and their gradient arrays, the study's
  // "Pre-training Memory Usage ≈ Memory for Network Model". The optimizer state and the exchange
  // buffers come with the first update, activations, workspace and input with the first forward [?]
  // (docs/memory-model.md).
  double before_training() const { return context + weights + gradients; }
};

// One entry per GPU, GPU0 first.
std::vector<MemoryParts> estimate_memory(const Workload& workload, const WorkloadCosts& costs,
                                         const FrameworkConfig& framework,
                                         const MemoryOptions& options);

// The largest per-GPU batch whose every GPU fits in `capacity_bytes`; 0 if not even one sample.
int largest_batch(const Workload& workload, const WorkloadCosts& costs,
                  const FrameworkConfig& framework, MemoryOptions options, double capacity_bytes);

}  // namespace gpuscale::wl
