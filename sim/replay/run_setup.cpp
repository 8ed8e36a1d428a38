#include "sim/replay/run_setup.hpp"

#include <algorithm>
#include <set>
#include <tuple>

namespace gpuscale::sim {
namespace {

// cuDNN 7's algorithm counts (cudnn.h): what cudnnFindConvolution*Algorithm tries per shape.
constexpr int kForwardAlgorithms = 8;
constexpr int kBackwardDataAlgorithms = 6;
constexpr int kBackwardFilterAlgorithms = 7;

double autotune_s(const ReplaySetup& s) {
  // Shapes the compute model times alike are tuned once (the framework caches by shape).
  std::set<std::tuple<double, double, double>> shapes;
  double total = 0;
  for (size_t i = 0; i < s.workload->layers.size(); ++i) {
    if (s.workload->layers[i].type != wl::LayerType::Conv) continue;
    const compute::LayerTimes t = s.compute->layer_times(static_cast<int>(i), s.batch);
    if (!shapes.insert({t.forward.value, t.backward_data.value, t.backward_weights.value}).second)
      continue;
    total += kForwardAlgorithms * t.forward.value +
             kBackwardDataAlgorithms * t.backward_data.value +
             kBackwardFilterAlgorithms * t.backward_weights.value;
  }
  return total;
}

double weight_broadcast_s(const ReplaySetup& s) {
  const Bytes weights{static_cast<double>(s.costs->params) * s.precision->weight_bytes};
  double slowest = 0;
  for (size_t g = 1; g < s.gpus.size(); ++g) {
    const topo::Route route = s.router->route(s.gpus[0], s.gpus[g]);
    slowest = std::max(slowest, route.copy_time(*s.topology, weights).value);
  }
  return slowest;
}

}  // namespace

RunSetupCost run_setup_cost(const ReplaySetup& s) {
  RunSetupCost cost;
  if (s.framework->execution.cudnn_autotune) cost.autotune_s = autotune_s(s);
  cost.weight_broadcast_s = weight_broadcast_s(s);
  return cost;
}

}  // namespace gpuscale::sim
