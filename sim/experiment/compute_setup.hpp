// The compute-time model a configuration runs: the analytic model or a measured profile on the
// machine's GPU, with convolutions by the algorithms the framework picks (its cuDNN autotuning
// and workspace limit), and the workspace those algorithms need, which the memory model takes.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "sim/compute/compute_model.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::sim {

// `profile` empty: the analytic model. Throws ConfigError for a bad profile.
std::shared_ptr<const compute::ComputeTimeModel> compute_model_of(
    const wl::Workload& workload, const wl::WorkloadCosts& costs,
    const wl::FrameworkConfig& framework, const compute::GpuSpec& gpu,
    const std::string& profile = "");

// The largest convolution workspace at a per-GPU batch (compute::largest_workspace_bytes), for
// wl::MemoryOptions::workspace_bytes; it keeps the model and the workload alive.
std::function<double(int)> workspace_of(std::shared_ptr<const compute::ComputeTimeModel> model,
                                        const wl::Workload& workload);

}  // namespace gpuscale::sim
