// gpuscale's predictions of a suite's runs: the study's setup simulated once (every network x
// method x batch x GPU count, or the methods and batches a network names;
// sim/experiment/experiment.hpp), plus the memory figures the replay does not report (pre-training
// memory, the largest batch that fits).
#pragma once

#include <functional>
#include <memory>

#include "sim/experiment/experiment.hpp"
#include "validation/src/metrics.hpp"
#include "validation/src/suite.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/workload.hpp"

namespace gpuscale::validation {

// Called after each simulated configuration (for progress on stderr).
using Progress = std::function<void(int done, int total, const sim::ResultRow& row)>;

// What the metrics read of a simulated configuration.
PredictedRun predicted_run(const sim::ResultRow& row);

// The images of a strong-scaling epoch of `w` as the setup counts them: its strong_images, or
// the workload's dataset's samples (`strong_images: dataset`).
long strong_images_of(const Setup& setup, const wl::Workload& w);

// Throws ConfigError when the setup does not describe what gpuscale would simulate: a network
// whose workload trains on another dataset or in another precision than the setup's, a machine
// whose GPUs have other memory than setup.gpu_memory.
// `without`: host mechanisms left out (sim::mechanism_names), to show what each costs; the
// input pipeline is left out anyway where the study fed synthetic data. `framework`: the setup's
// framework as held in memory (`gpuscale fit` trying host costs); null: read from its file.
Predictions predict(const Suite& suite, const Progress& progress = nullptr,
                    const std::vector<std::string>& without = {},
                    std::shared_ptr<const wl::FrameworkConfig> framework = nullptr);

}  // namespace gpuscale::validation
