#include "sim/compute/layer_kernels.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace gpuscale::compute {
namespace {

constexpr int kForward = static_cast<int>(TrainingPass::forward);
constexpr int kBackwardData = static_cast<int>(TrainingPass::backward_data);
constexpr int kBackwardWeights = static_cast<int>(TrainingPass::backward_weights);

std::array<bool, kTrainingPassCount> passes_of(const wl::Layer& layer, const wl::LayerCost& cost) {
  if (layer.type == wl::LayerType::Input) return {false, false, false};
  return {true, cost.has_backward_data, cost.has_backward_weights};
}

LayerPlan plan_layer(const wl::Workload& workload, const wl::WorkloadCosts& costs, int index) {
  const wl::Layer& layer = workload.layers[static_cast<size_t>(index)];
  const wl::LayerCost& cost = costs.layers[static_cast<size_t>(index)];
  const wl::LayerParams& p = layer.params;
  LayerPlan plan;
  plan.has_pass = passes_of(layer, cost);
  switch (layer.type) {
    case wl::LayerType::Input:
      return plan;
    case wl::LayerType::Conv: {
      plan.mapping = LayerPlan::Mapping::conv;
      ConvShape& s = plan.conv;
      s.in_channels = layer.input.channels;
      s.in_height = layer.input.height;
      s.in_width = layer.input.width;
      s.out_channels = p.filters;
      s.filter_height = p.kernel_h;
      s.filter_width = p.kernel_w;
      s.pad_height = p.pad_h;
      s.pad_width = p.pad_w;
      s.stride_height = p.stride_h;
      s.stride_width = p.stride_w;
      s.groups = p.groups;
      if (s.out_height() != layer.output.height || s.out_width() != layer.output.width) {
        throw std::logic_error(fmt::format("layer {}: convolution output {}x{} differs from the "
                                           "inferred shape {}",
                                           layer.name, s.out_height(), s.out_width(),
                                           wl::to_string(layer.output)));
      }
      break;
    }
    case wl::LayerType::Fc:
      plan.mapping = LayerPlan::Mapping::fc;
      plan.fc_inputs = static_cast<double>(layer.input.elements());
      plan.fc_outputs = static_cast<double>(p.filters);
      break;
    default: {
      plan.mapping = LayerPlan::Mapping::elementwise;
      const double element_bytes = wl::bytes_per_element(workload.precision);
      double in_elements = 0;
      for (int input : layer.inputs) {
        in_elements +=
            static_cast<double>(workload.layers[static_cast<size_t>(input)].output.elements());
      }
      plan.flops_per_sample = {cost.fwd_flops, cost.bwd_data_flops, cost.bwd_weight_flops};
      plan.bytes_per_sample[kForward] = cost.fwd_activation_bytes;
      plan.bytes_per_batch[kForward] = cost.param_bytes;
      // bwd_bytes(N) split so that the two passes sum to it: the weights pass re-reads the input
      // and writes the parameter gradients; the data pass reads the output gradient and the
      // parameters and writes the input gradient. Without a data pass, the weights pass reads
      // the output gradient too.
      double weights_per_sample = 0, weights_per_batch = 0;
      if (cost.has_backward_weights) {
        weights_per_sample = cost.has_backward_data ? in_elements * element_bytes
                                                    : cost.bwd_activation_bytes;
        weights_per_batch = cost.param_bytes;
        plan.bytes_per_sample[kBackwardWeights] = weights_per_sample;
        plan.bytes_per_batch[kBackwardWeights] = weights_per_batch;
      }
      if (cost.has_backward_data) {
        plan.bytes_per_sample[kBackwardData] = cost.bwd_activation_bytes - weights_per_sample;
        plan.bytes_per_batch[kBackwardData] = 2 * cost.param_bytes - weights_per_batch;
      }
      return plan;
    }
  }
  if (p.bias) {
    plan.bias_outputs = static_cast<double>(layer.output.elements());
    plan.bias_params = static_cast<double>(p.filters);
  }
  return plan;
}

}  // namespace

std::vector<LayerPlan> plan_layers(const wl::Workload& workload, const wl::WorkloadCosts& costs) {
  if (costs.layers.size() != workload.layers.size()) {
    throw std::invalid_argument(fmt::format("costs of {} layers for a workload of {}",
                                            costs.layers.size(), workload.layers.size()));
  }
  std::vector<LayerPlan> plans;
  plans.reserve(workload.layers.size());
  for (size_t i = 0; i < workload.layers.size(); ++i) {
    plans.push_back(plan_layer(workload, costs, static_cast<int>(i)));
  }
  return plans;
}

PassKernels kernels_of(const LayerPlan& plan, TrainingPass pass, int batch, Precision precision) {
  const double n = batch;
  PassKernels out;
  switch (plan.mapping) {
    case LayerPlan::Mapping::none:
      return out;
    case LayerPlan::Mapping::elementwise: {
      const int p = static_cast<int>(pass);
      out.work[out.count++] = {KernelClass::elementwise, n * plan.flops_per_sample[p],
                               n * plan.bytes_per_sample[p] + plan.bytes_per_batch[p]};
      return out;
    }
    case LayerPlan::Mapping::conv: {
      ConvShape shape = plan.conv;
      shape.batch = batch;
      out.work[out.count++] = conv_kernel_work(shape, pass, precision);
      break;
    }
    case LayerPlan::Mapping::fc:
      out.work[out.count++] = gemm_kernel_work(n, plan.fc_outputs, plan.fc_inputs, precision);
      break;
  }
  // Bias: forward adds it to every output (read and write the output, read the bias);
  // backward-weights sums the output gradient over everything but the channel (read it,
  // write the bias gradient). One addition per output element either way.
  if (plan.bias_outputs > 0) {
    const double outputs = n * plan.bias_outputs;
    const double element_bytes = bytes_per_element(precision);
    if (pass == TrainingPass::forward) {
      out.work[out.count++] = {KernelClass::elementwise, outputs,
                               (2 * outputs + plan.bias_params) * element_bytes};
    } else if (pass == TrainingPass::backward_weights) {
      out.work[out.count++] = {KernelClass::elementwise, outputs,
                               (outputs + plan.bias_params) * element_bytes};
    }
  }
  return out;
}

}  // namespace gpuscale::compute
