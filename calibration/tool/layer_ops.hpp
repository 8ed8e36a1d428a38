// One layer of a workload as a framework runs it on the GPU: its forward, backward-data and
// backward-weights passes as cuDNN, cuBLAS or gpuscale-calibrate's own kernel calls, on buffers
// the network profiler owns (activations and their gradients) and the operation owns
// (parameters, their gradients, library state). docs/calibration.md#what-each-layer-runs lists
// the calls.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "calibration/tool/convolution.hpp"
#include "calibration/tool/gpu_context.hpp"
#include "sim/compute/kernel_time.hpp"
#include "sim/compute/layer_kernels.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::calib {

class LayerOp {
 public:
  virtual ~LayerOp() = default;
  // Enqueues one pass on the context's stream.
  virtual void run(compute::TrainingPass pass) = 0;
  // The algorithm the library runs for `pass`, "" when there is no choice to record.
  virtual std::string algorithm(compute::TrainingPass /*pass*/) const { return ""; }
};

// Where a layer reads and writes, at one batch size.
struct LayerIo {
  long batch = 0;
  std::vector<const void*> inputs;  // the outputs of the layer's inputs, in order
  std::vector<void*> input_grads;   // their gradients (nullptr where none is computed)
  void* output = nullptr;
  void* output_grad = nullptr;
};

// Resources shared by the layers of one network at one batch size.
struct SharedResources {
  const DeviceBuffer& workspace;
  ConvAlgorithmCache& conv_algorithms;
};

// Throws CudaFailure for a layer type it cannot run, OutOfDeviceMemory when its parameters do
// not fit. `workload` gives the shapes of the layer's inputs; `plan` (plan_layers) the
// convolution's shape, as the compute model sees it.
std::unique_ptr<LayerOp> make_layer_op(GpuContext& ctx, const wl::Workload& workload,
                                       const wl::Layer& layer, const compute::LayerPlan& plan,
                                       const LayerIo& io, SharedResources shared);

}  // namespace gpuscale::calib
