// Everything one replay reads, loaded for one configuration of an experiment: the machine sized
// and laid out for the job (machine_setup.hpp), the framework and its exchange method, the router
// the run's copies take, the workload, its per-layer costs, the compute-time model (the analytic
// roofline, or the experiment's measured profile), a split sample's halo exchange and the input
// pipeline's costs on the machine's CPU. `setup` points into the other members, so the object
// neither copies nor moves.
#pragma once

#include <memory>
#include <string>

#include "sim/compute/compute_model.hpp"
#include "sim/compute/gpu_spec.hpp"
#include "sim/exchange/exchange_choice.hpp"
#include "sim/exchange/exchange_method.hpp"
#include "sim/exchange/spatial_halo.hpp"
#include "sim/experiment/experiment.hpp"
#include "sim/experiment/machine_setup.hpp"
#include "sim/replay/replay.hpp"
#include "topologies/src/routing.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/spatial_partition.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::sim {

struct ReplayInputs {
  // Throws ConfigError for bad input: unknown machine or workload, GPUs that do not fit, ...
  ReplayInputs(const Experiment& experiment, const Configuration& config);
  ReplayInputs(const ReplayInputs&) = delete;
  ReplayInputs& operator=(const ReplayInputs&) = delete;

  const topo::Topology machine;
  const Placement placement;
  const wl::FrameworkConfig framework;
  const ExchangeChoice exchange_choice;  // the configuration's exchange, resolved
  const std::unique_ptr<const ExchangeMethod> exchange;
  const topo::Router router;
  const wl::SpatialSplit spatial;  // how each sample is split (none: data parallelism alone)
  const wl::Workload whole;        // the workload as its file describes it
  const wl::Workload workload;     // what one GPU holds: `whole`, or its spatial shard
  const wl::WorkloadCosts costs;
  const compute::GpuSpec gpu;  // the job's first GPU's: the compute model's and the input's
  const std::shared_ptr<const compute::ComputeTimeModel> compute;
  const std::unique_ptr<const SpatialHalo> halo;  // null: every GPU holds whole samples
  ReplaySetup setup;
};

}  // namespace gpuscale::sim
