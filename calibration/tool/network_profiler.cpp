#include "calibration/tool/network_profiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "calibration/tool/cuda_status.hpp"
#include "calibration/tool/layer_ops.hpp"
#include "sim/compute/layer_kernels.hpp"

namespace gpuscale::calib {
namespace {

using compute::TrainingPass;

constexpr std::array<TrainingPass, compute::kTrainingPassCount> kPasses = {
    TrainingPass::forward, TrainingPass::backward_data, TrainingPass::backward_weights};

// Everything one batch size needs on the GPU; destroyed before the next batch is tried.
struct NetworkOnGpu {
  DeviceBuffer workspace;
  ConvAlgorithmCache conv_algorithms;
  std::vector<DeviceBuffer> outputs;    // per layer
  std::vector<DeviceBuffer> gradients;  // per layer; empty for the input
  std::vector<std::unique_ptr<LayerOp>> ops;  // per layer; nullptr for the input
};

NetworkOnGpu place_network(GpuContext& ctx, const wl::Workload& workload,
                           const std::vector<compute::LayerPlan>& plans, long batch,
                           std::size_t workspace_bytes) {
  NetworkOnGpu net;
  net.workspace = DeviceBuffer(workspace_bytes);
  const std::size_t layers = workload.layers.size();
  for (std::size_t i = 0; i < layers; ++i) {
    const auto elements = static_cast<std::size_t>(batch) *
                          static_cast<std::size_t>(workload.layers[i].output.elements());
    net.outputs.push_back(ctx.tensor(elements));
    net.gradients.push_back(i == 0 ? DeviceBuffer() : ctx.tensor(elements));
  }
  net.ops.resize(layers);
  for (std::size_t i = 1; i < layers; ++i) {
    const wl::Layer& layer = workload.layers[i];
    LayerIo io;
    io.batch = batch;
    io.output = net.outputs[i].get();
    io.output_grad = net.gradients[i].get();
    for (int input : layer.inputs) {
      const auto in = static_cast<std::size_t>(input);
      io.inputs.push_back(net.outputs[in].get());
      io.input_grads.push_back(plans[i].has(TrainingPass::backward_data)
                                   ? net.gradients[in].get()
                                   : nullptr);
    }
    net.ops[i] = make_layer_op(ctx, workload, layer, plans[i], io,
                               SharedResources{net.workspace, net.conv_algorithms});
  }
  ctx.synchronize();
  return net;
}

// Times the passes each layer has, as the compute model counts them (plan_layers).
void time_layers(GpuContext& ctx, const wl::Workload& workload,
                 const std::vector<compute::LayerPlan>& plans, long batch, NetworkOnGpu& net,
                 const TimingMethod& timing, std::vector<compute::LayerProfile>& profiles) {
  for (std::size_t i = 1; i < workload.layers.size(); ++i) {
    compute::BatchMeasurement m;
    compute::PassTimes spread;
    std::array<double*, compute::kTrainingPassCount> median_of = {
        &m.time.forward.value, &m.time.backward_data.value, &m.time.backward_weights.value};
    std::array<double*, compute::kTrainingPassCount> spread_of = {
        &spread.forward.value, &spread.backward_data.value, &spread.backward_weights.value};
    for (TrainingPass pass : kPasses) {
      const int p = static_cast<int>(pass);
      if (!plans[i].has(pass)) continue;
      LayerOp& op = *net.ops[i];
      try {
        const Timing t = time_on_stream(ctx, [&] { op.run(pass); }, timing);
        *median_of[p] = t.median;
        *spread_of[p] = t.spread;
      } catch (const CudaFailure& e) {
        throw CudaFailure(fmt::format("layer {} ({}) at batch {}: {}", workload.layers[i].name,
                                      compute::to_string(pass), batch, e.what()));
      }
      m.algorithm[p] = op.algorithm(pass);
    }
    m.spread = spread;
    profiles[i - 1].by_batch[batch] = m;
  }
}

// The largest batch whose buffers fit, above `known_fit` (0 when none is known): doubling until
// one does not fit, then bisecting. Only allocates: nothing is timed. cuDNN describes a tensor
// with 32-bit counts, which bounds the search for networks with small layers (LeNet, AlexNet).
struct LargestBatch {
  long batch = 0;
  bool memory_bound = true;  // false: cuDNN's tensor size limit stopped the search first
};

LargestBatch largest_batch_that_fits(GpuContext& ctx, const wl::Workload& workload,
                                     const std::vector<compute::LayerPlan>& plans,
                                     std::size_t workspace_bytes, long known_fit) {
  long widest = 1;  // elements per sample of the largest tensor
  for (const wl::Layer& layer : workload.layers) widest = std::max(widest, layer.output.elements());
  const long limit = std::numeric_limits<int>::max() / widest;
  const auto fits = [&](long batch) {
    try {
      place_network(ctx, workload, plans, batch, workspace_bytes);
      return true;
    } catch (const OutOfDeviceMemory&) {
      return false;
    }
  };
  long fit = known_fit;
  long no_fit = std::max(1L, 2 * known_fit);
  for (; no_fit <= limit && fits(no_fit); no_fit *= 2) fit = no_fit;
  if (no_fit > limit) {
    if (fits(limit)) return {limit, false};
    no_fit = limit;
  }
  while (no_fit - fit > 1) {
    const long mid = fit + (no_fit - fit) / 2;
    (fits(mid) ? fit : no_fit) = mid;
  }
  return {fit, true};
}

}  // namespace

NetworkProfile profile_network(GpuContext& ctx, const wl::Workload& workload,
                               const wl::WorkloadCosts& costs,
                               const NetworkProfileOptions& options) {
  const std::vector<compute::LayerPlan> plans = compute::plan_layers(workload, costs);
  NetworkProfile result;
  for (std::size_t i = 1; i < workload.layers.size(); ++i) {
    result.layers.push_back({workload.layers[i].name, workload.layers[i].origin, {}});
  }
  // Times one batch size; false when it does not fit.
  const auto measure = [&](long batch) {
    try {
      NetworkOnGpu net = place_network(ctx, workload, plans, batch, options.workspace_bytes);
      time_layers(ctx, workload, plans, batch, net, options.timing, result.layers);
    } catch (const OutOfDeviceMemory& e) {
      fmt::print(stderr, "{} at batch {}: does not fit ({})\n", workload.name, batch, e.what());
      result.out_of_memory_batches.push_back(batch);
      for (auto& layer : result.layers) layer.by_batch.erase(batch);  // a partial batch is none
      return false;
    }
    double total = 0;
    for (const auto& layer : result.layers) {
      const compute::PassTimes& t = layer.by_batch.at(batch).time;
      total += t.forward.value + t.backward_data.value + t.backward_weights.value;
    }
    fmt::print(stderr, "{} at batch {}: {} layers, {:.3f} ms of kernels per iteration\n",
               workload.name, batch, result.layers.size(), total * 1e3);
    return true;
  };
  long largest_fit = 0;
  for (long batch : options.batches) {
    if (measure(batch)) largest_fit = std::max(largest_fit, batch);
  }
  if (options.largest_that_fits) {
    const LargestBatch largest = largest_batch_that_fits(ctx, workload, plans,
                                                         options.workspace_bytes, largest_fit);
    fmt::print(stderr, "{}: the largest batch that fits is {}{}\n", workload.name,
               largest.batch,
               largest.memory_bound ? "" : " (cuDNN's 2^31-element tensor limit, not memory)");
    if (largest.batch > 0 && !result.layers.front().by_batch.contains(largest.batch)) {
      measure(largest.batch);
    }
    const long next = largest.batch + 1;
    if (largest.memory_bound && std::find(result.out_of_memory_batches.begin(),
                                          result.out_of_memory_batches.end(),
                                          next) == result.out_of_memory_batches.end()) {
      result.out_of_memory_batches.push_back(next);
    }
    std::sort(result.out_of_memory_batches.begin(), result.out_of_memory_batches.end());
  }
  // A profile needs at least one measured batch per layer.
  if (result.layers.empty() || result.layers.front().by_batch.empty()) result.layers.clear();
  return result;
}

}  // namespace gpuscale::calib
