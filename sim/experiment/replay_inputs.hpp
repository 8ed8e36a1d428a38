// Everything one replay reads, loaded for one configuration of an experiment: the machine sized
// and laid out for the job (machine_setup.hpp), the framework, the router the run's copies take,
// the workload, its per-layer costs, the compute-time model (the analytic roofline, or the
// experiment's measured profile) and the input pipeline's costs on the machine's CPU. `setup`
// points into the other members, so the object neither copies nor moves.
#pragma once

#include <memory>
#include <string>

#include "sim/compute/compute_model.hpp"
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
  const topo::Router router;
  const wl::SpatialSplit spatial;  // how each sample is split (none: data parallelism alone)
  const wl::Workload whole;        // the workload as its file describes it
  const wl::Workload workload;     // what one GPU holds: `whole`, or its spatial shard
  const wl::WorkloadCosts costs;
  const std::shared_ptr<const compute::ComputeTimeModel> compute;
  ReplaySetup setup;
};

}  // namespace gpuscale::sim
