// What each layer costs per sample: FLOPs of its three passes, memory traffic, activations kept
// for backward, and its parameter tensors. The conventions are docs/workload-schema.md#costs.
#pragma once

#include <string>
#include <vector>

#include "workloads/src/workload.hpp"

namespace gpuscale::wl {

// One parameter array: one key of the gradient exchange ("res2.1.conv1.weight").
struct ParamTensor {
  std::string name;
  int layer = 0;
  long elements = 0;
};

struct LayerCost {
  long params = 0;
  double fwd_macs = 0;  // multiply-adds of conv and fc, per sample
  // FLOPs per sample (a multiply-add is 2).
  double fwd_flops = 0;
  double bwd_data_flops = 0;
  double bwd_weight_flops = 0;
  // Memory traffic per sample of the activations, and per batch of the parameters.
  double fwd_activation_bytes = 0;
  double bwd_activation_bytes = 0;
  double param_bytes = 0;
  // Parameters forward and backward-data read, per batch: all of them (param_bytes), but for an
  // embedding, whose gather reads only the rows its ids name (counted per sample).
  double param_read_bytes = 0;
  double activation_bytes = 0;  // kept from forward for backward, per sample
  bool has_backward_data = false;   // some layer upstream has parameters
  bool has_backward_weights = false;

  double fwd_bytes(int batch) const { return batch * fwd_activation_bytes + param_read_bytes; }
  // Backward reads the weights (data pass) and writes their gradients (weights pass).
  double bwd_bytes(int batch) const {
    return batch * bwd_activation_bytes + param_read_bytes + param_bytes;
  }
};

struct WorkloadCosts {
  std::vector<LayerCost> layers;     // parallel to Workload::layers
  std::vector<ParamTensor> tensors;  // in forward order
  long params = 0;
  double fwd_macs = 0;   // per sample
  double fwd_flops = 0;  // per sample
  double bwd_flops = 0;  // per sample, both backward passes
};

WorkloadCosts compute_costs(const Workload& workload);

}  // namespace gpuscale::wl
