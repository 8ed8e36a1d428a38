#include "workloads/src/memory_model.hpp"

#include <algorithm>
#include <stdexcept>

#include "workloads/src/transformer_layers.hpp"

namespace gpuscale::wl {
namespace {

// Activations: what forward keeps for backward (every layer's output, but a ReLU's where the
// framework runs it in place), plus the gradients of activations alive during backward. MXNet's
// memory planner recycles the latter; we count the two largest outputs (a layer's output
// gradient and its input gradient) [?] (docs/memory-model.md).
double activation_bytes_per_sample(const Workload& w, const WorkloadCosts& costs,
                                   const FrameworkConfig& f) {
  double kept = 0, largest = 0;
  for (size_t i = 0; i < w.layers.size(); ++i) {
    largest = std::max(largest, static_cast<double>(w.layers[i].output.elements()));
    if (f.relu_in_place && w.layers[i].type == LayerType::Relu) continue;
    if (f.add_in_place && w.layers[i].type == LayerType::Add) continue;
    kept += costs.layers[i].activation_bytes;
  }
  return kept + 2 * largest * bytes_per_element(w.precision);
}

// An input pipeline that decodes on the GPU (DALI): each decode thread's nvJPEG buffer, and for
// each sample of every batch the prefetch queue holds, each operator's output: the decoded RGB
// image (3 bytes a pixel), the resized 8-bit sample and the float32 sample. A maintainer's rule
// (NVIDIA/DALI#840): every operator's output at its batch's size, times the queue's depth
// (docs/gpu-input-pipeline-sources.md §3). Buffers grow to the largest batch seen; the mean
// image stands for it, so this is a floor [?].
double gpu_input_bytes(const Workload& w, const InputPipeline& in, const MemoryOptions& o) {
  if (!in.on_gpu || o.decoded_image_pixels == 0) return 0;  // nothing decoded, no pipeline
  const double elements = static_cast<double>(w.layers.front().output.elements());
  const double per_sample = 3 * o.decoded_image_pixels + elements + 4 * elements;
  return in.decode_threads * in.decoder_buffer.value + in.prefetch_batches * o.batch * per_sample;
}

}  // namespace

std::vector<MemoryParts> estimate_memory(const Workload& w, const WorkloadCosts& costs,
                                         const FrameworkConfig& f, const MemoryOptions& o) {
  if (o.gpus < 1 || o.batch < 1) throw std::invalid_argument("estimate_memory: gpus and batch >= 1");
  if (!o.exchange.bytes.empty() && o.exchange.bytes.size() != static_cast<size_t>(o.gpus)) {
    throw std::invalid_argument("estimate_memory: exchange buffers for another GPU count");
  }
  const double element = bytes_per_element(w.precision);
  const PrecisionRecipe& precision = f.precision_of(w);
  const double params = static_cast<double>(costs.params);
  const TransformerLayers blocks = transformer_layers(w);
  double cast_copies = 0;
  for (size_t i = 0; i < w.layers.size(); ++i) {
    cast_copies += cast_weight_elements(w.layers[i], precision, blocks.contains(i));
  }

  MemoryParts common;
  common.context = f.context.value.value;
  // The copies of cast weights, 2 bytes per element, live from their forward to their backward
  // (autocast's 16-bit copy) or across the iteration (an FP8 weight and its transpose).
  common.weights = params * precision.weight_bytes + cast_copies * 2;
  common.gradients = params * (precision.gradient_bytes + (precision.master_gradients ? 4 : 0));
  const double optimizer_bytes =
      params * precision.optimizer_bytes_per_param(f.optimizer_state_per_param);
  common.activations =
      (activation_bytes_per_sample(w, costs, f) + o.halo_elements_per_sample * element) * o.batch;
  common.workspace = o.workspace_bytes ? o.workspace_bytes(o.batch) : 0;
  common.input = gpu_input_bytes(w, f.input, o);
  common.optimizer = o.exchange.optimizer_in_store ? 0 : optimizer_bytes;
  std::vector<MemoryParts> gpus(static_cast<size_t>(o.gpus), common);
  for (size_t g = 0; g < o.exchange.bytes.size(); ++g) {
    gpus[g].exchange += o.exchange.bytes[g];
  }
  return gpus;
}

int largest_batch(const Workload& w, const WorkloadCosts& costs, const FrameworkConfig& f,
                  MemoryOptions o, double capacity_bytes) {
  auto fits = [&](int batch) {
    o.batch = batch;
    for (const MemoryParts& g : estimate_memory(w, costs, f, o)) {
      if (g.total() > capacity_bytes) return false;
    }
    return true;
  };
  if (!fits(1)) return 0;
  int low = 1;  // fits
  int high = 2;
  while (fits(high)) {  // memory grows with the batch: find a batch that does not fit
    low = high;
    if (high > (1 << 24)) return high;
    high *= 2;
  }
  while (high - low > 1) {
    const int mid = low + (high - low) / 2;
    (fits(mid) ? low : high) = mid;
  }
  return low;
}

}  // namespace gpuscale::wl
