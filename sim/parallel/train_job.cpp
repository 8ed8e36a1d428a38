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
#include "workloads/src/workload_at_precision.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::par {
namespace {

// Megatron-LM's precision recipes (its file's `precision:` section): gradient dtype, master
// weights, the optimizer step's bytes, FP8 casts.
constexpr const char* kFramework = "megatron-lm";

wl::Workload workload_at_precision(const TrainJob& job) {
  return wl::load_workload_at(job.workload, job.precision, Origin{"--precision", 0});
}

// The weight casts in a layer's forward at batch b (the compute model's cast kernels less its
// activation casts, which an FP8 layer pays in every forward).
double weight_cast_seconds(const compute::ComputeTimeModel& model, int layer, int batch) {
  return model.pass_plan(layer, compute::TrainingPass::forward, batch).weight_cast_time.value;
}

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
                                    const wl::PrecisionRecipe& recipe, const ParallelLayout& l) {
  std::vector<StageTimes> stages(static_cast<size_t>(l.pp));
  const int per_stage = shape.layers / l.pp;
  const double s = static_cast<double>(shape.sequence), h = static_cast<double>(shape.hidden);
  // Transformer Engine casts a weight to FP8 on the first micro-batch and keeps it
  // (precision_recipe.hpp, WeightCasts::per_iteration): the compute model counts that cast in
  // each forward, the pipeline once per iteration.
  const bool cast_once = recipe.weight_casts == wl::WeightCasts::per_iteration;
  for (size_t i = 1; i < w.layers.size(); ++i) {
    const int block = shape.block_of[i];
    const int stage = block < 0 ? 0 : std::min(block / per_stage, l.pp - 1);
    const compute::LayerTimes t = model.layer_times(static_cast<int>(i), l.micro_batch);
    const double weight_casts =
        cast_once ? weight_cast_seconds(model, static_cast<int>(i), l.micro_batch) : 0;
    const double ways = split_over_tp(w.layers[i].type, l.sequence_parallel) ? l.tp : 1;
    const double forward = (t.forward.value - weight_casts) / ways;
    StageTimes& st = stages[static_cast<size_t>(stage)];
    st.forward_s += forward;
    st.weight_cast_s += weight_casts / ways;
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
  const topo::Topology machine =
      sim::machine_for(job.topology, job.overrides, l.gpus(), job.topology_document);
  const topo::Router router(machine, machine.default_routing());
  const wl::Workload w = workload_at_precision(job);
  const wl::WorkloadCosts costs = wl::compute_costs(w);
  PipelineJob pj;
  pj.machine = &machine;
  pj.router = &router;
  pj.placement = sim::place_job(machine, l.gpus());
  const topo::Device& gpu_device = machine.devices()[static_cast<size_t>(pj.placement.gpus[0])];
  const compute::GpuSpec gpu = compute::load_gpu_spec(gpu_device.model, gpu_device.origin);
  const wl::FrameworkConfig framework = wl::load_framework(kFramework);
  const wl::PrecisionRecipe& recipe = framework.precision_of(w);
  const auto model = sim::compute_model_of(w, costs, framework, gpu);
  pj.tp = l.tp;
  pj.pp = l.pp;
  pj.dp = l.dp;
  pj.micro_batches = l.micro_batches();
  pj.zero1 = l.zero1;
  pj.protocol = job.protocol;
  // Activations cross GPUs at the dtype the layers write (Megatron's pipeline sends and tensor-
  // parallel allreduces carry the model's params_dtype).
  const double activations = static_cast<double>(shape.sequence) * l.micro_batch *
                             static_cast<double>(shape.hidden) * recipe.activation_bytes;
  pj.tp_allreduce_bytes = activations;
  pj.activation_bytes = activations;
  const std::vector<StageTimes> times = stage_times(w, shape, *model, recipe, l);
  const std::vector<long> params = stage_params(shape, l.pp);
  const int per_stage = shape.layers / l.pp;
  const int allreduces = l.tp > 1 ? 2 * per_stage : 0;  // Megatron's f and g per sublayer
  for (int k = 0; k < l.pp; ++k) {
    StageWork sw;
    sw.forward_s = times[static_cast<size_t>(k)].forward_s;
    sw.backward_s = times[static_cast<size_t>(k)].backward_s;
    sw.weight_cast_s = times[static_cast<size_t>(k)].weight_cast_s;
    sw.forward_allreduces = allreduces;
    sw.backward_allreduces = allreduces * (l.recompute == Recompute::Full ? 2 : 1);
    const double psi = static_cast<double>(params[static_cast<size_t>(k)]) / l.tp;
    sw.gradient_bytes = recipe.gradient_bytes * psi;
    sw.parameter_bytes = recipe.weight_bytes * psi;
    sw.optimizer_s =
        psi / (l.zero1 ? l.dp : 1) * recipe.update_bytes_per_param / gpu.copy_bandwidth().value;
    pj.stages.push_back(sw);
  }

  TrainResult t;
  t.topology = machine.name();
  t.gpu = gpu.name;
  t.precision = recipe.name;
  t.precision_runs_as = recipe.runs_as;
  t.layout = l;
  t.micro_batches = l.micro_batches();
  t.sim = simulate_pipeline(pj);
  t.stage_times = times;
  for (const StageResult& s : t.sim.stages) t.dp_comm_s = std::max(t.dp_comm_s, s.dp_s);
  t.bubble_closed_form = bubble_fraction(l.pp, t.micro_batches);
  t.memory = stage_memory(shape, l, recipe);
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

TransformerShape shape_of(const TrainJob& job) {
  const wl::Workload w = workload_at_precision(job);
  // The recipe is checked here, before any child runs: an unknown or unavailable one is one
  // line at --precision.
  wl::load_framework(kFramework).precision_of(w);
  return transformer_shape(w, wl::compute_costs(w));
}

TrainResult run_checked(const TrainJob& job, const TransformerShape& shape) {
  return sim::run_isolated_as([&] { return simulate(job, shape); });
}

int gpus_per_node_of(const TrainJob& job, int gpus) {
  return sim::gpus_per_node(
      sim::machine_for(job.topology, job.overrides, gpus, job.topology_document));
}

}  // namespace

TrainResult run_train_job(const TrainJob& job) {
  const TransformerShape shape = shape_of(job);
  check_layout(job.layout, shape, gpus_per_node_of(job, job.layout.gpus()));
  return run_checked(job, shape);
}

std::vector<TrainResult> run_layout_sweep(const TrainJob& base, int gpus, const std::vector<int>& tps,
                                          const std::vector<int>& pps) {
  const TransformerShape shape = shape_of(base);
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
