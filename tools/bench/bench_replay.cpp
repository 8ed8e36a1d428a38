// How the simulator's cost grows with the GPU count: host wall time and SimGrid activities of a
// 100 MiB ring allreduce alone (nccl, i.e. nccl_ring, and MPI's ring) on Lassen with 8 to 512
// GPUs, and of ResNet-50 training iterations (batch 32 per GPU, nccl) on 8 and 512 GPUs. A replay
// of 1 and of 3 iterations gives the cost of one more iteration, (x3 - x1) / 2, without the
// set-up (loading, routing, building the platform) that both pay; a sampled run of 32 samples
// (33 iterations) what error bars cost, there and in the case they are for: ResNet-50 at batch 16
// under PyTorch + Horovod on a Lassen whose kernels, host threads and input pipeline vary
// (docs/variability.md), against a deterministic 3-iteration run of the same. Last, today's
// scale: ResNet-50 data-parallel iterations under PyTorch DDP on a DGX H200 SuperPOD of 2,048 to
// 16,384 GPUs (issue 20's aim: under 10 s and 4 GB at 16,384), with the child's peak memory.
//
// Each configuration runs in a child process (SimGrid allows one engine per process); its wall
// time is taken around that child, so it includes the set-up and the fork, and is the fastest of
// kRuns runs (the least disturbed by the rest of the host). A plain executable, not a
// google-benchmark loop: a configuration is a whole process, and its activities are the same in
// every run.
// Run: build/tools/bench/bench_replay (tools/bench/README.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "sim/engine/isolated.hpp"
#include "sim/experiment/collective_job.hpp"
#include "sim/experiment/replay_inputs.hpp"
#include "sim/replay/replay.hpp"

namespace {

using namespace gpuscale;

constexpr const char* kMachine = "lassen";
constexpr int kRuns = 5;

struct Measure {
  double wall_s = 0;
  double activities = 0;  // a count; the per-iteration increment may end in .5
  double simulated_s = 0;
};

// The fastest of kRuns runs of `work`, in host seconds.
double wall_seconds(const std::function<void()>& work) {
  double best = 0;
  for (int run = 0; run < kRuns; ++run) {
    const auto start = std::chrono::steady_clock::now();
    work();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run == 0 || wall < best) best = wall;
  }
  return best;
}

Measure allreduce(const std::string& comm, int gpus) {
  sim::CollectiveJob job;
  job.topology = kMachine;
  job.comm = comm;
  job.gpus = gpus;
  job.bytes = 100.0 * 1024 * 1024;
  sim::CollectiveJobResult r;
  const double wall = wall_seconds([&] { r = sim::run_collective_job(job); });
  return {wall, static_cast<double>(r.activities), r.seconds};
}

// The default experiment (MXNet's framework) on kMachine.
sim::Experiment on_machine() {
  sim::Experiment e;
  e.topology = kMachine;
  return e;
}

// `iterations` ResNet-50 iterations, or with `samples` a sampled run (docs/variability.md) of
// that many iterations after the first; simulated_s is the replay's iteration time (steady state
// from 2 iterations on, the first iteration alone otherwise; a sampled run's mean). By default
// MXNet's framework at batch 32 on kMachine with `nccl`; `e` may name another machine and
// framework, `comm` another exchange method.
Measure resnet50_iterations(int gpus, int iterations, int samples = 0,
                            sim::Experiment e = on_machine(), int batch = 32,
                            const std::string& comm = "nccl") {
  e.iterations = iterations;
  e.samples = samples;
  const sim::Configuration config{"resnet-50", comm, batch, gpus};
  std::string text;
  const double wall = wall_seconds([&] {
    text = sim::run_isolated([&] {
      const sim::ReplayInputs inputs(e, config);
      const sim::ReplayResult r = sim::replay_iterations(inputs.setup);
      return nlohmann::json{{"activities", r.activities}, {"iteration_s", r.iteration_s}}.dump();
    });
  });
  const nlohmann::json j = nlohmann::json::parse(text);
  return {wall, j["activities"].get<double>(), j["iteration_s"].get<double>()};
}

// 3 ResNet-50 iterations under PyTorch DDP (25 MiB buckets) with `comm` on `gpus` GPUs of a DGX
// H200 SuperPOD (grown to the nodes they need), once: its wall time and its child's peak
// resident memory (getrusage in the child, which also counts what it shares with this process).
struct ScaleMeasure {
  double wall_s = 0, peak_mb = 0, activities = 0, simulated_s = 0;
};
ScaleMeasure superpod_iterations(int gpus, const std::string& comm) {
  sim::Experiment e;
  e.topology = "dgx-h200-superpod";
  e.framework = "pytorch-ddp";
  e.iterations = 3;
  const sim::Configuration config{"resnet-50", comm, 32, gpus};
  std::string text;
  const auto start = std::chrono::steady_clock::now();
  text = sim::run_isolated([&] {
    const sim::ReplayInputs inputs(e, config);
    const sim::ReplayResult r = sim::replay_iterations(inputs.setup);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return nlohmann::json{{"activities", r.activities},
                          {"iteration_s", r.iteration_s},
                          {"peak_kb", usage.ru_maxrss}}
        .dump();
  });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const nlohmann::json j = nlohmann::json::parse(text);
  return {wall, j["peak_kb"].get<double>() / 1024, j["activities"].get<double>(),
          j["iteration_s"].get<double>()};
}

// kMachine with every source of variability; what a sampled iteration costs does not depend on
// the spreads' sizes, only on which sources vary (the input pipeline adds every process's decode
// threads).
sim::Experiment horovod_on_a_varying_machine() {
  const auto path = std::filesystem::temp_directory_path() / "bench-replay-varying-lassen.yaml";
  std::ofstream(path) << "base: " << kMachine << "\nname: varying-" << kMachine << "\n"
                      << "variability:\n"
                      << "  compute: {distribution: normal, cv: 0.027, source: bench_replay}\n"
                      << "  host: {distribution: exponential, mean: 0.02, source: bench_replay}\n"
                      << "  input: {distribution: normal, cv: 0.05, source: bench_replay}\n";
  sim::Experiment e;
  e.topology = path.string();
  e.framework = "pytorch-horovod";
  return e;
}

void print_row(const std::string& what, int gpus, const Measure& m) {
  std::cout << fmt::format("{:<40} {:>5} {:>10.2f} {:>12.0f} {:>14.3f}\n", what, gpus, m.wall_s * 1e3,
                           m.activities, m.simulated_s * 1e3)
            << std::flush;
}

}  // namespace

int main() {
  std::cout << fmt::format("{} (wall: host time of the configuration's child process, fastest of {}; "
                           "activities: SimGrid activities started)\n\n", kMachine, kRuns)
            << fmt::format("{:<40} {:>5} {:>10} {:>12} {:>14}\n", "configuration", "gpus",
                           "wall ms", "activities", "simulated ms");
  for (const char* comm : {"nccl", "ring"}) {
    for (int gpus : {8, 64, 256, 512}) {
      print_row(fmt::format("allreduce 100 MiB {}", comm), gpus, allreduce(comm, gpus));
    }
  }
  for (int gpus : {8, 512}) {
    const Measure one = resnet50_iterations(gpus, 1);
    const Measure three = resnet50_iterations(gpus, 3);
    print_row("resnet-50 b32 nccl, 1 iteration", gpus, one);
    print_row("resnet-50 b32 nccl, 3 iterations", gpus, three);
    const Measure increment{(three.wall_s - one.wall_s) / 2,
                            (three.activities - one.activities) / 2, three.simulated_s};
    print_row("resnet-50 b32 nccl, per iteration", gpus, increment);
    // Drawing factors costs next to nothing: 32 samples cost 32 more iterations.
    print_row("resnet-50 b32 nccl, 32 samples", gpus, resnet50_iterations(gpus, 0, 32));
  }
  // One allreduce per tensor under Aluminum's switch: most of ResNet-50's tensors go to MPI's
  // recursive doubling or Rabenseifner, whose rounds the replay evaluates by depth above 16 GPUs
  // (docs/collectives.md, "Lock-step schedules at scale").
  sim::Experiment per_tensor = on_machine();
  per_tensor.framework = "pytorch-horovod";
  per_tensor.fusion_mb = 0;
  for (int gpus : {512, 1024}) {
    print_row("resnet-50 b32 aluminum/tensor, 3 iter.", gpus,
              resnet50_iterations(gpus, 3, 0, per_tensor, 32, "aluminum"));
  }
  const sim::Experiment varying = horovod_on_a_varying_machine();
  for (int gpus : {8, 512}) {
    print_row("resnet-50 b16 horovod, 3 iterations", gpus,
              resnet50_iterations(gpus, 3, 0, varying, 16));
    print_row("resnet-50 b16 horovod, 32 samples", gpus,
              resnet50_iterations(gpus, 0, 32, varying, 16));
  }
  std::cout << fmt::format("\ndgx-h200-superpod, resnet-50 b32 pytorch-ddp, 3 iterations, one run "
                           "each (peak: the child's resident memory)\n\n")
            << fmt::format("{:<12} {:>6} {:>10} {:>10} {:>12} {:>14}\n", "comm", "gpus", "wall s",
                           "peak MB", "activities", "simulated ms");
  for (const char* comm : {"nccl", "nccl_tree"}) {
    for (int gpus : {2048, 4096, 16384}) {
      const ScaleMeasure m = superpod_iterations(gpus, comm);
      std::cout << fmt::format("{:<12} {:>6} {:>10.2f} {:>10.0f} {:>12.0f} {:>14.3f}\n", comm, gpus,
                               m.wall_s, m.peak_mb, m.activities, m.simulated_s * 1e3)
                << std::flush;
    }
  }
  return 0;
}
