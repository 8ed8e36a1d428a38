#include "sim/parallel/train_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "sim/compute/gpu_spec.hpp"
#include "sim/engine/isolated.hpp"
#include "sim/experiment/compute_setup.hpp"
#include "sim/experiment/machine_setup.hpp"
#include "sim/parallel/train_result_codec.hpp"
#include "topologies/core/error.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::par {
namespace {

// Bytes a mixed-precision Adam step moves per parameter (apex FusedAdam, as Megatron-LM runs it):
// the fp16 gradient read, the fp32 master weight, momentum and variance read and written, the
// fp16 weight written: 2 + 3 x (4 + 4) + 2.
constexpr double kAdamBytesPerParam = 28;

// Megatron-LM splits attention (by heads), the MLP, the embeddings and the loss (by vocabulary)
// over the t GPUs (Shoeybi et al. 2019, sec. 3); layer norms, dropouts and residual adds run
// whole on every GPU unless sequence parallelism splits them too (Korthikanti et al., sec. 4.2.2).
bool split_over_tp(wl::LayerType type, bool sequence_parallel) {
  switch (type) {
    case wl::LayerType::LayerNorm:
    case wl::LayerType::Dropout:
    case wl::LayerType::Add: return sequence_parallel;
    default: return true;
  }
}

// Each stage's kernel times per micro-batch on one GPU: the compute model's time of each of the
// stage's layers at batch b, divided by t where Megatron splits the layer (the compute model
// takes whole layers, and an attention layer split by heads is not a layer the workload schema
// can state). Selective recomputation reruns attention's s^2 part, the share s / (s + 2h) of its
// forward FLOPs (4 s^2 h of 8 s h^2 + 4 s^2 h); full recomputation reruns each transformer
// layer's forward.
std::vector<StageTimes> stage_times(const wl::Workload& w, const TransformerShape& shape,
                                    const compute::ComputeTimeModel& model,
                                    const ParallelLayout& l) {
  std::vector<StageTimes> stages(static_cast<size_t>(l.pp));
  const int per_stage = shape.layers / l.pp;
  const double s = static_cast<double>(shape.sequence), h = static_cast<double>(shape.hidden);
  for (size_t i = 1; i < w.layers.size(); ++i) {
    const int block = shape.block_of[i];
    const int stage = block < 0 ? 0 : std::min(block / per_stage, l.pp - 1);
    const compute::LayerTimes t = model.layer_times(static_cast<int>(i), l.micro_batch);
    const double ways = split_over_tp(w.layers[i].type, l.sequence_parallel) ? l.tp : 1;
    const double forward = t.forward.value / ways;
    StageTimes& st = stages[static_cast<size_t>(stage)];
    st.forward_s += forward;
    st.backward_s += (t.backward_data.value + t.backward_weights.value) / ways;
    const bool in_block = block >= 0 && block < shape.layers;
    if (in_block && l.recompute == Recompute::Full) st.backward_s += forward;
    if (l.recompute == Recompute::Selective && w.layers[i].type == wl::LayerType::Attention) {
      st.backward_s += forward * s / (s + 2 * h);
    }
  }
  return stages;
}

// In the child: the layout's iteration simulated, and what follows from it.
TrainResult simulate(const TrainJob& job, const TransformerShape& shape) {
  const auto wall_start = std::chrono::steady_clock::now();
  const ParallelLayout& l = job.layout;
  const topo::Topology machine = sim::machine_for(job.topology, job.overrides, l.gpus());
  const topo::Router router(machine, machine.default_routing());
  const wl::Workload w = wl::load_workload(job.workload);
  const wl::WorkloadCosts costs = wl::compute_costs(w);
  PipelineJob pj;
  pj.machine = &machine;
  pj.router = &router;
  pj.placement = sim::place_job(machine, l.gpus());
  const topo::Device& gpu_device = machine.devices()[static_cast<size_t>(pj.placement.gpus[0])];
  const compute::GpuSpec gpu = compute::load_gpu_spec(gpu_device.model, gpu_device.origin);
  const auto model = sim::compute_model_of(w, costs, wl::load_framework("pytorch-ddp"), gpu);
  pj.tp = l.tp;
  pj.pp = l.pp;
  pj.dp = l.dp;
  pj.micro_batches = l.micro_batches();
  pj.zero1 = l.zero1;
  pj.protocol = job.protocol;
  const double sbh2 = static_cast<double>(shape.sequence) * l.micro_batch *
                      static_cast<double>(shape.hidden) * 2;
  pj.tp_allreduce_bytes = sbh2;
  pj.activation_bytes = sbh2;
  const std::vector<StageTimes> times = stage_times(w, shape, *model, l);
  const std::vector<long> params = stage_params(shape, l.pp);
  const int per_stage = shape.layers / l.pp;
  const int allreduces = l.tp > 1 ? 2 * per_stage : 0;  // Megatron's f and g per sublayer
  for (int k = 0; k < l.pp; ++k) {
    StageWork sw;
    sw.forward_s = times[static_cast<size_t>(k)].forward_s;
    sw.backward_s = times[static_cast<size_t>(k)].backward_s;
    sw.forward_allreduces = allreduces;
    sw.backward_allreduces = allreduces * (l.recompute == Recompute::Full ? 2 : 1);
    const double psi = static_cast<double>(params[static_cast<size_t>(k)]) / l.tp;
    sw.gradient_bytes = 2 * psi;
    sw.optimizer_s =
        psi / (l.zero1 ? l.dp : 1) * kAdamBytesPerParam / gpu.copy_bandwidth().value;
    pj.stages.push_back(sw);
  }

  TrainResult t;
  t.topology = machine.name();
  t.gpu = gpu.name;
  t.layout = l;
  t.micro_batches = l.micro_batches();
  t.sim = simulate_pipeline(pj);
  t.stage_times = times;
  for (const StageResult& s : t.sim.stages) t.dp_comm_s = std::max(t.dp_comm_s, s.dp_s);
  t.bubble_closed_form = bubble_fraction(l.pp, t.micro_batches);
  t.memory = stage_memory(shape, l);
  for (const StageMemory& m : t.memory) t.memory_per_gpu = std::max(t.memory_per_gpu, m.total());
  t.gpu_memory = gpu.memory.value;
  t.fits = t.memory_per_gpu <= t.gpu_memory;
  const double seconds = t.sim.iteration_s, gpus = l.gpus();
  const double peak = gpu.peak(compute::Precision::tensor).value;
  t.tokens_per_s = static_cast<double>(l.global_batch) * static_cast<double>(shape.sequence) / seconds;
  t.mfu = model_flops_per_iteration(shape, l.global_batch) / (seconds * gpus * peak);
  t.tflops_per_gpu_eq3 = narayanan_flops_per_iteration(shape, l.global_batch) / (seconds * gpus) / 1e12;
  const int allreduces_per_micro_batch =
      l.tp > 1 ? 2 * per_stage * (l.recompute == Recompute::Full ? 3 : 2) : 0;
  t.tp_comm_s = t.sim.tp_allreduce_s * allreduces_per_micro_batch * t.micro_batches;
  t.pp_comm_s = l.pp > 1 ? 2 * t.micro_batches * t.sim.pp_transfer_s : 0;
  t.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return t;
}

TransformerShape shape_of(const std::string& workload) {
  const wl::Workload w = wl::load_workload(workload);
  return transformer_shape(w, wl::compute_costs(w));
}

TrainResult run_checked(const TrainJob& job, const TransformerShape& shape) {
  return sim::run_isolated_as([&] { return simulate(job, shape); });
}

int gpus_per_node_of(const TrainJob& job, int gpus) {
  return sim::gpus_per_node(sim::machine_for(job.topology, job.overrides, gpus));
}

}  // namespace

TrainResult run_train_job(const TrainJob& job) {
  const TransformerShape shape = shape_of(job.workload);
  check_layout(job.layout, shape, gpus_per_node_of(job, job.layout.gpus()));
  return run_checked(job, shape);
}

std::vector<TrainResult> run_layout_sweep(const TrainJob& base, int gpus, const std::vector<int>& tps,
                                          const std::vector<int>& pps) {
  const TransformerShape shape = shape_of(base.workload);
  const std::vector<ParallelLayout> layouts =
      valid_layouts(base.layout, gpus, tps, pps, shape, gpus_per_node_of(base, gpus));
  if (layouts.empty()) {
    throw ConfigError({"--gpus", 0},
                      fmt::format("no valid layout of {} GPUs for {} with micro-batch {} and "
                                  "global batch {} (t must divide {} heads, p {} layers, B b d)",
                                  gpus, base.workload, base.layout.micro_batch,
                                  base.layout.global_batch, shape.heads, shape.layers));
  }
  std::vector<TrainResult> results;
  for (const ParallelLayout& l : layouts) {
    TrainJob job = base;
    job.layout = l;
    results.push_back(run_checked(job, shape));
  }
  std::ranges::stable_sort(results, {}, [](const TrainResult& r) { return r.sim.iteration_s; });
  return results;
}

}  // namespace gpuscale::par
