#include "workloads/src/memory_model.hpp"

#include <algorithm>
#include <stdexcept>

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
    kept += costs.layers[i].activation_bytes;
  }
  return kept + 2 * largest * bytes_per_element(w.precision);
}

}  // namespace

std::vector<MemoryParts> estimate_memory(const Workload& w, const WorkloadCosts& costs,
                                         const FrameworkConfig& f, const MemoryOptions& o) {
  if (o.gpus < 1 || o.batch < 1) throw std::invalid_argument("estimate_memory: gpus and batch >= 1");
  const double element = bytes_per_element(w.precision);
  const double param_bytes = static_cast<double>(costs.params) * element;
  const double optimizer_bytes = param_bytes * f.optimizer_state_per_param;

  MemoryParts common;
  common.context = f.context.value.value;
  common.weights = param_bytes;
  common.gradients = param_bytes;
  common.activations =
      (activation_bytes_per_sample(w, costs, f) + o.halo_elements_per_sample * element) * o.batch;
  common.workspace = o.workspace_bytes ? o.workspace_bytes(o.batch) : 0;
  // On one GPU MXNet uses no kvstore (python/mxnet/model.py _create_kvstore) and updates locally.
  const bool kvstore = o.gpus > 1 && o.exchange != ExchangeLayout::Allreduce;
  const bool store_updates = kvstore && f.update_on_kvstore;
  common.optimizer = store_updates ? 0 : optimizer_bytes;
  std::vector<MemoryParts> gpus(static_cast<size_t>(o.gpus), common);
  if (o.gpus == 1) return gpus;

  // What the store keeps per key besides the merge buffers: the weights it updates and their
  // optimizer state, when it runs the optimizer.
  const double stored_per_key = store_updates ? 1.0 + f.optimizer_state_per_param : 0.0;
  switch (o.exchange) {
    case ExchangeLayout::KvstoreDevice: {
      std::vector<double> key_bytes;
      for (const ParamTensor& t : costs.tensors) key_bytes.push_back(static_cast<double>(t.elements) * element);
      const std::vector<int> reducer = assign_reducers(key_bytes, o.gpus, o.reducers);
      // The merged array and n-1 copies of the other GPUs' gradients (comm.h CommDevice::Reduce).
      const double per_key = o.gpus + stored_per_key;
      for (size_t k = 0; k < key_bytes.size(); ++k) {
        gpus[static_cast<size_t>(reducer[k])].exchange += key_bytes[k] * per_key;
      }
      break;
    }
    case ExchangeLayout::KvstoreNccl:
      // ncclReduce into one merged array per key on GPU0 (src/kvstore/kvstore_nccl.h) [?].
      gpus[0].exchange += param_bytes * (1.0 + stored_per_key);
      break;
    case ExchangeLayout::Allreduce:
      // DDP keeps every gradient a second time, in its buckets' flat buffers (torch/csrc/
      // distributed/c10d/reducer.cpp:503-504 at v1.5.0); Horovod one fusion buffer per GPU,
      // allocated at full size (horovod/common/fusion_buffer_manager.cc:21-45 at v0.19.1).
      for (MemoryParts& g : gpus) {
        g.exchange += f.allreduce.grouping == AllreduceGrouping::Buckets ? param_bytes : o.fusion_buffer_bytes;
      }
      break;
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
