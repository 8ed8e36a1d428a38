// What `gpuscale workload show` prints: a model's layers with their shapes and costs, and its
// memory per GPU, as a table for people or JSON for scripts.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "workloads/src/dataset.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/memory_model.hpp"

namespace gpuscale::wl {

struct WorkloadView {
  const Workload& workload;
  const WorkloadCosts& costs;
  const Dataset& dataset;
  const FrameworkConfig& framework;
  const MemoryOptions& memory_options;
  // The exchange whose buffers memory_options holds, as outputs name it ("p2p", "allreduce").
  const std::string& exchange;
  double gpu_memory_bytes = 0;  // capacity for the largest batch
};

// JSON: {"name", "description", "source", "file", "dataset": {"name", "samples"}, "precision",
//  "input_shape", "params", "published_params"?, "param_tensors", "fwd_macs_per_sample",
//  "fwd_flops_per_sample", "bwd_flops_per_sample", "batch",
//  "layers": [{"name", "type", "output_shape", "params", "fwd_flops", "bwd_data_flops",
//              "bwd_weight_flops", "fwd_bytes", "bwd_bytes", "activation_bytes"}],
//  "memory_bytes": {"framework", "gpus", "exchange", "capacity", "largest_batch",
//                   "gpu0": {parts..., "total"}, "max_other": {...}?}}
// FLOPs are per sample; bytes are at the given batch.
nlohmann::ordered_json workload_json(const WorkloadView& view);
std::string workload_table(const WorkloadView& view);

}  // namespace gpuscale::wl
