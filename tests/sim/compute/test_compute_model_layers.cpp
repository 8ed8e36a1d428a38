// From layers to kernels (docs/compute-model.md#from-layers-to-kernels): the analytic model's
// times per layer and pass in closed form on the shipped V100-SXM2 constants, its behaviour over
// whole models, and the measured-profile model with its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "sim/compute/compute_model.hpp"
#include "sim/compute/layer_kernels.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::compute {
namespace {

using ::testing::HasSubstr;
using testing::config_error_of;
using testing::write_temp_file;

struct Fixture {
  explicit Fixture(const std::string& workload_name, const std::string& gpu_name = "V100-SXM2",
                   const std::vector<std::string>& overrides = {})
      : workload(wl::load_workload(workload_name, overrides)),
        costs(wl::compute_costs(workload)),
        gpu(load_gpu_spec(gpu_name)),
        params(load_analytic_params(shipped_analytic_params_path())),
        policy(),
        recipe(wl::load_framework("mxnet").precision_of(workload)),
        model(make_analytic_model(workload, costs, gpu, params, policy, recipe)) {}

  // The ConfigError a profile model of the profile file at `path` raises.
  std::string profile_model_error(const std::string& path) const {
    const MeasuredProfile profile = load_profile(path);
    return config_error_of(
        [&] { make_profile_model(workload, costs, profile, gpu, params, policy, recipe); });
  }

  int index(const std::string& name) const {
    for (size_t i = 0; i < workload.layers.size(); ++i) {
      if (workload.layers[i].name == name) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no layer " << name << " in " << workload.name;
    return 0;
  }
  int first_of(wl::LayerType type) const {
    for (size_t i = 0; i < workload.layers.size(); ++i) {
      if (workload.layers[i].type == type) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no layer of type " << wl::to_string(type) << " in " << workload.name;
    return 0;
  }
  double layer_time(const std::vector<KernelWork>& kernels, Precision p = Precision::fp32) const {
    return analytic_layer_time(gpu, params, kernels, p).value;
  }
  // The cuDNN call of one convolution pass, by the algorithm the policy picks.
  double conv_time(const ConvShape& s, TrainingPass pass, Precision p = Precision::fp32) const {
    return choose_conv_algorithm(gpu, params.conv, params.launch_overhead, s, pass, p, policy)
        .time.value;
  }
  // Forward + backward of every layer, at `batch`, in seconds.
  double iteration(int batch) const {
    double total = 0;
    for (size_t i = 0; i < workload.layers.size(); ++i) {
      const LayerTimes t = model->layer_times(static_cast<int>(i), batch);
      total += t.forward.value + t.backward_data.value + t.backward_weights.value;
    }
    return total;
  }

  wl::Workload workload;
  wl::WorkloadCosts costs;
  GpuSpec gpu;
  AnalyticParams params;
  ConvAlgorithmPolicy policy;  // autotuning within 1 GiB, as MXNet 1.1 runs
  wl::PrecisionRecipe recipe;  // the workload's, as MXNet 1.1 runs it
  std::unique_ptr<ComputeTimeModel> model;
};

TEST(ConvWork, GroupsDivideFlopsAndFilterBytes) {
  ConvShape s;  // 4 channels in 2 groups, 6 filters of 2x3x3, 5x5 with pad 1: output 5x5
  s.in_channels = 4;
  s.in_height = s.in_width = 5;
  s.out_channels = 6;
  s.filter_height = s.filter_width = 3;
  s.pad_height = s.pad_width = 1;
  s.groups = 2;
  const KernelWork w = conv_kernel_work(s, TrainingPass::forward, Precision::fp32);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 1 * 6 * 2 * 3 * 3 * 5 * 5);
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (4 * 25 + 6 * 2 * 9 + 6 * 25));
  s.groups = 3;  // divides K = 6 but not C = 4
  EXPECT_THROW(conv_kernel_work(s, TrainingPass::forward, Precision::fp32), std::invalid_argument);
  s.groups = 0;
  EXPECT_THROW(conv_kernel_work(s, TrainingPass::forward, Precision::fp32), std::invalid_argument);
}

// ResNet-50 v1.5's strided 3x3: 128x56x56 -> 128x28x28, no bias.
ConvShape stage2_conv2(long batch) {
  ConvShape s;
  s.batch = batch;
  s.in_channels = 128;
  s.in_height = s.in_width = 56;
  s.out_channels = 128;
  s.filter_height = s.filter_width = 3;
  s.pad_height = s.pad_width = 1;
  s.stride_height = s.stride_width = 2;
  return s;
}

TEST(LayersToKernels, ConvIsOneCudnnCallPerPassByTheChosenAlgorithm) {
  const Fixture f("resnet-50");
  const ConvShape s = stage2_conv2(32);
  const int layer = f.index("stage2.1.conv2");
  const LayerTimes t = f.model->layer_times(layer, 32);
  for (TrainingPass pass : {TrainingPass::forward, TrainingPass::backward_data,
                            TrainingPass::backward_weights}) {
    const ConvChoice choice = choose_conv_algorithm(f.gpu, f.params.conv, f.params.launch_overhead,
                                                    s, pass, Precision::fp32, f.policy);
    const PassPlan plan = f.model->pass_plan(layer, pass, 32);
    const double got = pass == TrainingPass::forward         ? t.forward.value
                       : pass == TrainingPass::backward_data ? t.backward_data.value
                                                             : t.backward_weights.value;
    EXPECT_DOUBLE_EQ(got, choice.time.value + f.params.framework_overhead.value) << to_string(pass);
    EXPECT_DOUBLE_EQ(plan.time.value, got);
    EXPECT_EQ(plan.algorithm, to_string(choice.algorithm));
  }
  // Stride 2: only implicit GEMM runs it.
  EXPECT_EQ(f.model->pass_plan(layer, TrainingPass::forward, 32).algorithm, "implicit_gemm");
}

TEST(LayersToKernels, ConvBiasAndGroupsAddAnElementwiseKernelAndSplitTheFilters) {
  const Fixture f("alexnet");
  const int batch = 16;
  ConvShape s;  // conv2: 96x27x27 -> 256x27x27, 5x5 pad 2, 2 groups, bias
  s.batch = batch;
  s.in_channels = 96;
  s.in_height = s.in_width = 27;
  s.out_channels = 256;
  s.filter_height = s.filter_width = 5;
  s.pad_height = s.pad_width = 2;
  s.groups = 2;
  const double outputs = batch * 256.0 * 27 * 27;
  const KernelWork bias_add{KernelClass::elementwise, outputs, 4 * (2 * outputs + 256)};
  const KernelWork bias_grad{KernelClass::elementwise, outputs, 4 * (outputs + 256)};
  const LayerTimes t = f.model->layer_times(f.index("conv2"), batch);
  EXPECT_DOUBLE_EQ(t.forward.value, f.conv_time(s, TrainingPass::forward) + f.layer_time({bias_add}));
  EXPECT_DOUBLE_EQ(t.backward_data.value,
                   f.conv_time(s, TrainingPass::backward_data) + f.layer_time({}));
  EXPECT_DOUBLE_EQ(t.backward_weights.value,
                   f.conv_time(s, TrainingPass::backward_weights) + f.layer_time({bias_grad}));
  // Two groups: Winograd does not run grouped convolutions, implicit GEMM does.
  EXPECT_EQ(f.model->pass_plan(f.index("conv2"), TrainingPass::forward, batch).algorithm,
            "implicit_gemm");
}

TEST(LayersToKernels, FullyConnectedIsAGemmOfBatchByOutputsByInputs) {
  const Fixture f("resnet-50");
  const int batch = 64;
  const KernelWork gemm = gemm_kernel_work(batch, 1000, 2048, Precision::fp32);
  EXPECT_DOUBLE_EQ(gemm.flops, 2.0 * 64 * 1000 * 2048);
  const double outputs = batch * 1000.0;
  const LayerTimes t = f.model->layer_times(f.index("fc1"), batch);
  EXPECT_DOUBLE_EQ(t.forward.value,
                   f.layer_time({gemm, {KernelClass::elementwise, outputs, 4 * (2 * outputs +
                                                                                1000)}}));
  EXPECT_DOUBLE_EQ(t.backward_data.value, f.layer_time({gemm}));
  EXPECT_DOUBLE_EQ(t.backward_weights.value,
                   f.layer_time({gemm, {KernelClass::elementwise, outputs, 4 * (outputs +
                                                                                1000)}}));
}

TEST(LayersToKernels, ReluIsMemoryBoundOnItsTensors) {
  const Fixture f("resnet-50");
  const int batch = 32;
  // relu1 on 64x112x112: forward reads x and writes y; backward reads dy and the y it kept
  // (dx = dy [y > 0]) and writes dx.
  const double tensor = 1.0 * batch * 64 * 112 * 112 * 4;
  auto time_of = [&](double bytes) {
    return bytes / (900e9 * 0.867 * f.params.memory(KernelClass::elementwise)) +
           f.params.launch_overhead.value + f.params.framework_overhead.value;
  };
  const LayerTimes t = f.model->layer_times(f.index("relu1"), batch);
  EXPECT_NEAR(t.forward.value, time_of(2 * tensor), 1e-12);
  EXPECT_NEAR(t.backward_data.value, time_of(3 * tensor), 1e-12);
  EXPECT_EQ(t.backward_weights.value, 0);
}

TEST(LayersToKernels, BatchNormSplitsItsBackwardBytesBetweenItsTwoPasses) {
  const Fixture f("resnet-50");
  const int batch = 32, i = f.index("batchnorm1");
  const wl::LayerCost& c = f.costs.layers[static_cast<size_t>(i)];
  const LayerTimes t = f.model->layer_times(i, batch);
  const double overheads = f.params.launch_overhead.value + f.params.framework_overhead.value;
  const double bw = f.gpu.copy_bandwidth().value * f.params.memory(KernelClass::elementwise);
  // The statistics reduce over the batch and the map before anything is normalised: forward
  // reads x twice and writes y; backward reads dy and x for its reductions, again to write dx.
  const double tensor = batch * 64.0 * 112 * 112 * 4;
  EXPECT_DOUBLE_EQ(c.fwd_bytes(batch), 3 * tensor + c.param_bytes);
  EXPECT_DOUBLE_EQ(c.bwd_bytes(batch), 5 * tensor + 2 * c.param_bytes);
  EXPECT_NEAR(t.forward.value, c.fwd_bytes(batch) / bw + overheads, 1e-12);
  EXPECT_NEAR(t.backward_data.value + t.backward_weights.value,
              c.bwd_bytes(batch) / bw + 2 * overheads, 1e-12);
  // The weights pass re-reads the input (64x112x112) and writes the 128 parameter gradients.
  EXPECT_NEAR(t.backward_weights.value,
              (batch * 64.0 * 112 * 112 * 4 + c.param_bytes) / bw + overheads, 1e-12);
}

TEST(LayersToKernels, JoinsMoveBytesAndTheInputCostsNothing) {
  const Fixture f("googlenet");
  const int batch = 32;
  const double overheads = f.params.launch_overhead.value + f.params.framework_overhead.value;
  const double bw = f.gpu.copy_bandwidth().value * f.params.memory(KernelClass::elementwise);
  const int concat = f.first_of(wl::LayerType::Concat);
  const wl::LayerCost& c = f.costs.layers[static_cast<size_t>(concat)];
  EXPECT_EQ(c.fwd_flops, 0);
  const LayerTimes t = f.model->layer_times(concat, batch);
  EXPECT_NEAR(t.forward.value, c.fwd_bytes(batch) / bw + overheads, 1e-12);
  EXPECT_NEAR(t.backward_data.value, c.bwd_bytes(batch) / bw + overheads, 1e-12);
  EXPECT_EQ(t.backward_weights.value, 0);

  const Fixture r("resnet-50");
  const int add = r.first_of(wl::LayerType::Add);
  const LayerTimes a = r.model->layer_times(add, batch);
  // 256x56x56: two inputs read, one output written.
  EXPECT_NEAR(a.forward.value, 3.0 * batch * 256 * 56 * 56 * 4 / bw + overheads, 1e-12);

  const LayerTimes input = r.model->layer_times(0, batch);
  EXPECT_EQ(input.forward.value, 0);
  EXPECT_EQ(input.backward_data.value, 0);
  EXPECT_EQ(input.backward_weights.value, 0);
}

// Transformer big at 256 tokens, d 1024, 16 heads: the projections are GEMMs of N T rows, the
// core batched GEMMs of N h problems, the softmax elementwise between them.
TEST(LayersToKernels, AttentionIsProjectionGemmsAroundBatchedScoreGemms) {
  const Fixture f("transformer-big");
  const int batch = 4;
  const double n = batch, t = 256, d = 1024, h = 16, e = 4;
  const auto times = [](KernelWork w, double k) { return KernelWork{w.kind, w.flops * k,
                                                                    w.bytes * k}; };
  const KernelWork one = gemm_kernel_work(n * t, d, d, Precision::fp32);
  const KernelWork projections = times(one, 4);
  const KernelWork scores = times(gemm_kernel_work(t, t, d / h, Precision::fp32), n * h);
  const KernelWork weighted = times(gemm_kernel_work(t, d / h, t, Precision::fp32), n * h);
  const double p = n * h * t * t;
  const LayerTimes a = f.model->layer_times(f.index("encoder.1.self_attention"), batch);
  EXPECT_DOUBLE_EQ(a.forward.value,
                   f.layer_time({projections, scores,
                                 {KernelClass::elementwise, 5 * p, 2 * p * e}, weighted}));
  EXPECT_DOUBLE_EQ(a.backward_data.value,
                   f.layer_time({projections, times(weighted, 2),
                                 {KernelClass::elementwise, 3 * p, 3 * p * e},
                                 times(scores, 2)}));
  EXPECT_DOUBLE_EQ(a.backward_weights.value, f.layer_time({projections}));
  // The kernels' FLOPs are the layer's costs.
  const wl::LayerCost& c = f.costs.layers[static_cast<size_t>(f.index("encoder.1.self_attention"))];
  EXPECT_DOUBLE_EQ(projections.flops + scores.flops + weighted.flops + 5 * p, n * c.fwd_flops);
}

// Llama 2 70B's grouped-query attention (d 8192, 64 query heads, 8 key/value heads of 128): the
// K and V projections are GEMMs of N T rows by 1024 outputs, the scores every query head's.
TEST(LayersToKernels, GroupedQueryAttentionNarrowsTheKeyAndValueGemms) {
  const Fixture f("llama2-70b");
  const int batch = 1;
  const double n = batch, t = 4096, d = 8192, h = 64, kv = 1024, e = 2;
  const Precision tc = Precision::tensor;  // fp16 on a GPU with Tensor Cores
  const auto times = [](KernelWork w, double k) { return KernelWork{w.kind, w.flops * k,
                                                                    w.bytes * k}; };
  const KernelWork q_and_out = times(gemm_kernel_work(n * t, d, d, tc), 2);
  const KernelWork k_and_v = times(gemm_kernel_work(n * t, kv, d, tc), 2);
  const KernelWork projections{q_and_out.kind, q_and_out.flops + k_and_v.flops,
                               q_and_out.bytes + k_and_v.bytes};  // one launch
  const KernelWork scores = times(gemm_kernel_work(t, t, d / h, tc), n * h);
  const KernelWork weighted = times(gemm_kernel_work(t, d / h, t, tc), n * h);
  const double p = n * h * t * t;
  const int i = f.index("layer.1.self_attention");
  EXPECT_DOUBLE_EQ(f.model->layer_times(i, batch).forward.value,
                   f.layer_time({projections, scores,
                                 {KernelClass::elementwise, 5 * p, 2 * p * e}, weighted},
                                tc));
  const wl::LayerCost& c = f.costs.layers[static_cast<size_t>(i)];
  EXPECT_DOUBLE_EQ(projections.flops + scores.flops + weighted.flops + 5 * p, n * c.fwd_flops);
}

// Megatron-Core's GPT 1.7B (d 2048, 16 heads of 128, 4,096 tokens) declares its attention fused
// (FlashAttention-2, Dao 2023): the projections GEMM as before, then one core kernel per pass,
// a GEMM of the two batched GEMMs' FLOPs forward and 2.5x that backward (the scores
// recomputed), moving Q, K, V, the context and the fp32 logsumexp, and in backward their
// gradients: no T x T tensor.
TEST(LayersToKernels, FusedAttentionCoreIsOneGemmKernelWithoutTheScoreTensors) {
  const Fixture f("mcore-gpt-1.7b", "H100-SXM");
  const int batch = 2;
  const double n = batch, t = 4096, d = 2048, h = 16, e = 2, lse = 4;
  const Precision tc = Precision::tensor;
  const int i = f.index("layer.1.self_attention");
  ASSERT_TRUE(f.workload.layers[static_cast<size_t>(i)].params.fused);
  const LayerPlan plan = plan_layers(f.workload, f.costs)[static_cast<size_t>(i)];
  const KernelWork projections = kernels_of(plan, TrainingPass::forward, batch, tc).work[0];
  EXPECT_DOUBLE_EQ(projections.flops, 4 * 2 * n * t * d * d);  // Q, K, V, output: d x d each

  const PassKernels forward = kernels_of(plan, TrainingPass::forward, batch, tc);
  ASSERT_EQ(forward.work.size(), 3u);  // projections, the core, the projections' bias
  const KernelWork core = forward.work[1];
  EXPECT_EQ(core.kind, KernelClass::fused_attention_forward);
  EXPECT_DOUBLE_EQ(core.flops, 2 * (2 * n * h * t * t * (d / h)));  // Q K^T and P V
  EXPECT_DOUBLE_EQ(core.bytes, 4 * n * t * d * e + n * h * t * lse);  // Q, K, V, O; L

  const PassKernels backward = kernels_of(plan, TrainingPass::backward_data, batch, tc);
  ASSERT_EQ(backward.work.size(), 2u);  // projections, the core
  EXPECT_EQ(backward.work[1].kind, KernelClass::fused_attention_backward);
  EXPECT_DOUBLE_EQ(backward.work[1].flops, 2.5 * core.flops);
  // Q, K, V, O, dO read, dQ, dK, dV written; L read.
  EXPECT_DOUBLE_EQ(backward.work[1].bytes, 8 * n * t * d * e + n * h * t * lse);
  // The weights pass is the projections' (and their bias gradient) only.
  EXPECT_EQ(kernels_of(plan, TrainingPass::backward_weights, batch, tc).work.size(), 2u);

  // Timed by a GEMM's roofline, the core at the H100's measured fused-attention efficiency.
  const LayerTimes a = f.model->layer_times(i, batch);
  EXPECT_DOUBLE_EQ(a.forward.value, f.layer_time(forward.work, tc));
  EXPECT_DOUBLE_EQ(a.backward_data.value, f.layer_time(backward.work, tc));
  const double peak = f.gpu.peak(tc).value;
  const double core_bytes = 8 * n * t * d * e + n * h * t * lse;
  const double bandwidth = f.gpu.copy_bandwidth().value * f.params.gemm_memory_efficiency;
  const double core_s = std::max(2.5 * core.flops / (peak * f.gpu.fused_attention->backward),
                                 core_bytes / bandwidth) +
                        f.params.launch_overhead.value;
  EXPECT_NEAR(a.backward_data.value, f.layer_time({projections}, tc) + core_s, 1e-12);
}

// The same layer unfused (the 2021 Megatron-LM's way) at s = 4,096: the fused core does the
// forward's GEMM FLOPs and no softmax pass over the h T^2 probabilities, so it is faster in
// both passes; the layer's model FLOPs are the same either way, and so is the weights pass.
TEST(LayersToKernels, FusedAttentionIsFasterThanUnfusedAtSequence4096WithTheSameGemmFlops) {
  const Fixture fused("mcore-gpt-1.7b", "H100-SXM");
  const Fixture unfused("mcore-gpt-1.7b", "H100-SXM", {"args.fused_attention=false"});
  const int batch = 1;
  const Precision tc = Precision::tensor;
  const int i = fused.index("layer.1.self_attention");
  ASSERT_FALSE(unfused.workload.layers[static_cast<size_t>(i)].params.fused);
  const LayerPlan f_plan = plan_layers(fused.workload, fused.costs)[static_cast<size_t>(i)];
  const LayerPlan u_plan = plan_layers(unfused.workload, unfused.costs)[static_cast<size_t>(i)];
  const auto gemm_flops = [&](const LayerPlan& plan, TrainingPass pass) {
    double flops = 0;
    for (const KernelWork& k : kernels_of(plan, pass, batch, tc).work) {
      if (k.kind == KernelClass::gemm || k.kind == KernelClass::fused_attention_forward ||
          k.kind == KernelClass::fused_attention_backward) {
        flops += k.flops;
      }
    }
    return flops;
  };
  EXPECT_DOUBLE_EQ(gemm_flops(f_plan, TrainingPass::forward),
                   gemm_flops(u_plan, TrainingPass::forward));
  // Backward: the unfused four products plus the scores recomputed, one forward GEMM's worth.
  const double t = 4096, d = 2048;
  EXPECT_DOUBLE_EQ(gemm_flops(f_plan, TrainingPass::backward_data),
                   gemm_flops(u_plan, TrainingPass::backward_data) + 2 * t * t * d);
  EXPECT_DOUBLE_EQ(fused.costs.layers[static_cast<size_t>(i)].fwd_flops,
                   unfused.costs.layers[static_cast<size_t>(i)].fwd_flops);

  const LayerTimes f = fused.model->layer_times(i, batch);
  const LayerTimes u = unfused.model->layer_times(i, batch);
  EXPECT_LT(f.forward.value, 0.8 * u.forward.value);
  EXPECT_LT(f.backward_data.value, 0.8 * u.backward_data.value);
  EXPECT_DOUBLE_EQ(f.backward_weights.value, u.backward_weights.value);

  // What the layer keeps for backward: Q, K, V, the context and the logsumexp, no h T^2
  // probabilities (16 x 4,096^2 elements of 2 bytes in place of 16 x 4,096 of 4).
  EXPECT_DOUBLE_EQ(unfused.costs.layers[static_cast<size_t>(i)].activation_bytes -
                       fused.costs.layers[static_cast<size_t>(i)].activation_bytes,
                   16 * t * t * 2 - 16 * t * 4);
}

// Which workloads declare it: Megatron-Core's (validation/megatron-h100) fused, the 2021
// Megatron-LM's (validation/megatron-a100) and GPT-3's not.
TEST(LayersToKernels, OnlyTheMegatronCoreWorkloadsDeclareFusedAttention) {
  for (const char* name : {"mcore-gpt-1.7b", "mcore-gpt-7.1b", "mcore-gpt-16b", "mcore-gpt-32b",
                           "mcore-gpt-70b", "mcore-gpt-119b", "mcore-gpt-177b", "megatron-gpt-1.7b",
                           "megatron-gpt-530b", "gpt3-175b", "llama2-7b"}) {
    const wl::Workload w = wl::load_workload(name);
    const bool mcore = std::string(name).starts_with("mcore-");
    for (const wl::Layer& layer : w.layers) {
      if (layer.type == wl::LayerType::Attention) {
        EXPECT_EQ(layer.params.fused, mcore) << name << " " << layer.name;
      }
    }
  }
}

// An embedding gathers rows: its forward moves the ids and the rows they name, not the table;
// its weights pass zeroes the whole dense gradient table.
TEST(LayersToKernels, EmbeddingMovesTheRowsItGathers) {
  const Fixture f("transformer-big");
  const int batch = 8, i = f.index("embed");
  const wl::LayerCost& c = f.costs.layers[static_cast<size_t>(i)];
  const double overheads = f.params.launch_overhead.value + f.params.framework_overhead.value;
  const double bw = f.gpu.copy_bandwidth().value * f.params.memory(KernelClass::elementwise);
  const LayerTimes t = f.model->layer_times(i, batch);
  EXPECT_NEAR(t.forward.value, batch * (256 + 2 * 1024 * 256) * 4.0 / bw + overheads, 1e-12);
  EXPECT_EQ(t.backward_data.value, 0);
  EXPECT_NEAR(t.backward_weights.value,
              (batch * (256 + 3 * 1024 * 256) * 4.0 + c.param_bytes) / bw + overheads, 1e-12);
  // A tied layer has no parameters of its own but a weights pass.
  EXPECT_GT(f.model->layer_times(f.index("logits"), batch).backward_weights.value, 0);
}

// GNMT's LSTMs run as cuDNN's standard algorithm: one input GEMM over all steps, then per step a
// recurrent GEMM and a pointwise kernel, each paying its launch. The recurrent GEMM of 1024 units
// streams W_hh (4096 x 1024) on 4096 / 128 = 32 of the V100's 80 SMs, at 32/80 of the recurrent
// bandwidth; at batch 16 that read binds, in both precisions. Closed form: T x the step + the
// input GEMM forward, T x the step + the dx GEMM backward-data.
TEST(LayersToKernels, LstmIsAnInputGemmAndTStepsOfARecurrentGemmAndAPointwiseKernel) {
  const std::string fp16 =
      write_temp_file("gnmt-fp16.yaml", "base: gnmt\nname: gnmt-fp16\nprecision: fp16\n");
  for (const auto& [workload, p] :
       {std::pair{std::string("gnmt"), Precision::fp32}, std::pair{fp16, Precision::tensor}}) {
    const Fixture f(workload);
    const double n = 16, t = 50, h = 1024, e = bytes_per_element(p);
    const double launch = f.params.launch_overhead.value;
    const double copy = f.gpu.copy_bandwidth().value;
    const double weights = e * (n * h + 4 * h * h + n * 4 * h);
    const double flops = 2 * n * 4 * h * h;
    const double rate = f.gpu.peak(p).value * f.params.gemm_efficiency[static_cast<int>(p)];
    const double stream =
        copy * f.params.recurrent_memory_efficiency[static_cast<int>(p)] * 32.0 / 80.0;
    ASSERT_GT(weights / stream, flops / rate) << to_string(p);  // the read binds
    const double step_gemm = weights / stream + launch;
    const double bw = copy * f.params.memory(KernelClass::elementwise);
    const double forward_step = step_gemm + 7 * n * h * e / bw + launch;
    const double backward_step = step_gemm + 9 * n * h * e / bw + launch;
    const double projection =
        f.layer_time({gemm_kernel_work(n * t, 4 * h, h, p)}, p);  // framework overhead included
    const LayerTimes l = f.model->layer_times(f.index("decoder_att_rnn"), 16);
    EXPECT_NEAR(l.forward.value, t * forward_step + projection, 1e-12) << to_string(p);
    EXPECT_NEAR(l.backward_data.value,
                t * backward_step + f.layer_time({gemm_kernel_work(n * t, h, 4 * h, p)}, p), 1e-12)
        << to_string(p);
    // A bidirectional layer runs both directions' kernels.
    const LayerTimes bi = f.model->layer_times(f.index("encoder_l0"), 16);
    EXPECT_NEAR(bi.forward.value - f.params.framework_overhead.value,
                2 * (l.forward.value - f.params.framework_overhead.value), 1e-12)
        << to_string(p);
  }
}

TEST(LayersToKernels, MissingPassesCostNothing) {
  const Fixture f("resnet-50");
  EXPECT_EQ(f.model->layer_times(f.index("conv1"), 32).backward_data.value, 0);
  EXPECT_GT(f.model->layer_times(f.index("conv1"), 32).backward_weights.value, 0);
  for (size_t i = 1; i < f.workload.layers.size(); ++i) {
    const wl::LayerCost& c = f.costs.layers[i];
    const LayerTimes t = f.model->layer_times(static_cast<int>(i), 32);
    const std::string& name = f.workload.layers[i].name;
    EXPECT_GT(t.forward.value, 0) << name;
    EXPECT_EQ(t.backward_weights.value > 0, c.params > 0) << name;
    // A residual sum hands its gradient on to both branches: a backward pass with no kernel.
    const bool hands_on = f.workload.layers[i].type == wl::LayerType::Add;
    EXPECT_EQ(t.backward_data.value > 0, c.has_backward_data && !hands_on) << name;
  }
}

// Where two layers read one output (a residual block's input: its first convolution and the
// shortcut), their gradients are summed before that layer's own backward: one sum of two, read
// two tensors and write one, in the fork's backward-data pass; the residual sum itself runs no
// backward kernel.
TEST(LayersToKernels, GradientsMeetWhereTheBranchesFork) {
  const Fixture f("resnet-50");
  const int batch = 32, fork = f.index("pool1"), join = f.index("stage1.1.add1");
  const wl::LayerCost& c = f.costs.layers[static_cast<size_t>(fork)];
  const double tensor = batch * 64.0 * 56 * 56 * 4;  // pool1's output, 64x56x56
  // Max pooling's own backward reads dY and writes dX (64x112x112, four times dY).
  EXPECT_DOUBLE_EQ(c.bwd_bytes(batch), tensor + 4 * tensor + 3 * tensor);
  EXPECT_EQ(f.costs.layers[static_cast<size_t>(join)].bwd_bytes(batch), 0);
  EXPECT_EQ(f.model->layer_times(join, batch).backward_data.value, 0);
}

TEST(LayersToKernels, EveryLayerOfResNet50GrowsWithTheBatch) {
  const Fixture f("resnet-50");
  for (size_t i = 1; i < f.workload.layers.size(); ++i) {
    const std::string& name = f.workload.layers[i].name;
    LayerTimes previous = f.model->layer_times(static_cast<int>(i), 1);
    for (int batch = 2; batch <= 256; batch *= 2) {
      const LayerTimes t = f.model->layer_times(static_cast<int>(i), batch);
      EXPECT_GE(t.forward.value, previous.forward.value) << name << " at " << batch;
      EXPECT_GE(t.backward_data.value, previous.backward_data.value) << name << " at " << batch;
      EXPECT_GE(t.backward_weights.value, previous.backward_weights.value)
          << name << " at " << batch;
      previous = t;
    }
    EXPECT_GT(previous.forward.value, f.model->layer_times(static_cast<int>(i), 1).forward.value)
        << name;
  }
}

// NVIDIA DeepLearningExamples, MxNet/Classification/RN50v1.5/README.md, "Training performance:
// NVIDIA DGX-1 (8x V100 16GB)": 384 img/s on one V100 in FP32 at batch 96 (mxnet-20.12), i.e.
// 83 ms per 32 images, data loading and the optimizer included. The bounds allow the analytic
// model's known spread (docs/compute-model.md#check-against-deepbench) without admitting a
// factor-of-3 error.
TEST(LayersToKernels, ResNet50IterationOnAV100IsNearPublishedThroughput) {
  const Fixture f("resnet-50");
  const double t32 = f.iteration(32);
  EXPECT_GT(t32, 60e-3);
  EXPECT_LT(t32, 250e-3);
  EXPECT_LT(f.iteration(16), t32);
  EXPECT_LT(t32, f.iteration(64));
  for (const char* name : {"resnet-50", "lenet", "alexnet"}) {
    const Fixture m(name);
    std::printf("%-10s forward+backward on V100-SXM2, ms per iteration: batch 16 %.2f, 32 %.2f, "
                "64 %.2f\n",
                name, m.iteration(16) * 1e3, m.iteration(32) * 1e3, m.iteration(64) * 1e3);
  }
}

TEST(LayersToKernels, Fp16UsesTensorCoresWhereTheGpuHasThem) {
  const std::string path = write_temp_file("resnet-50-fp16.yaml",
                                           "base: resnet-50\nname: resnet-50-fp16\n"
                                           "precision: fp16\n");
  for (const char* gpu : {"V100-SXM2", "P100-SXM2"}) {
    const Fixture f(path, gpu);
    const Precision p = f.gpu.peak_tensor ? Precision::tensor : Precision::fp16;
    EXPECT_DOUBLE_EQ(f.model->layer_times(f.index("stage2.1.conv2"), 32).forward.value,
                     f.conv_time(stage2_conv2(32), TrainingPass::forward, p) + f.layer_time({}, p))
        << gpu;
  }
}

TEST(LayersToKernels, ReductionIsAStreamingKernelWithoutFrameworkOverhead) {
  const Fixture f("resnet-50");
  const double bw = f.gpu.copy_bandwidth().value * f.params.memory(KernelClass::elementwise);
  EXPECT_NEAR(f.model->reduction_time(3e8).value, 3e8 / bw + f.params.launch_overhead.value,
              1e-12);
  EXPECT_EQ(f.model->reduction_time(0).value, 0);
  EXPECT_THROW(f.model->reduction_time(-1), std::invalid_argument);
}

TEST(LayersToKernels, UpdateIsOneSgdMomentumKernelPerTensor) {
  const Fixture f("resnet-50");
  const double bw = f.gpu.copy_bandwidth().value * f.params.memory(KernelClass::elementwise);
  const long elements = 2359296;  // stage4's 3x3 weights: 512x512x3x3
  EXPECT_NEAR(f.model->update_time(elements).value,
              5.0 * elements * 4 / bw + f.params.launch_overhead.value +
                  f.params.framework_overhead.value,
              1e-12);
  EXPECT_EQ(f.model->update_time(0).value, 0);
  EXPECT_THROW(f.model->update_time(-1), std::invalid_argument);
}

// Under native AMP (PyTorch 1.6) each FP32 weight a convolution reads is cast to FP16 in forward
// and its FP16 gradient back to FP32 in backward-weights: one elementwise kernel of 6 bytes per
// element each, on top of the Tensor Core convolution.
TEST(PrecisionRecipes, AWeightCastIsAStreamingKernelOfSixBytesPerElement) {
  const Fixture f("resnet-50");
  wl::Workload amp = f.workload;
  wl::set_precision(amp, "amp", Origin{"--precision", 0});
  const wl::PrecisionRecipe recipe = wl::load_framework("pytorch-ddp").precision_of(amp);
  const auto model =
      make_analytic_model(amp, wl::compute_costs(amp), f.gpu, f.params, f.policy, recipe);
  const int conv = f.index("stage4.1.conv2");  // 512x512x3x3 = 2359296 weights
  const double n = 2359296;
  const double bw = f.gpu.copy_bandwidth().value * f.params.memory(KernelClass::elementwise);
  const double cast = 6 * n / bw + f.params.launch_overhead.value;
  const PassPlan forward = model->pass_plan(conv, TrainingPass::forward, 32);
  EXPECT_EQ(forward.precision, Precision::tensor);
  EXPECT_NEAR(forward.cast_time.value, cast, 1e-12);
  EXPECT_NEAR(model->pass_plan(conv, TrainingPass::backward_weights, 32).cast_time.value, cast,
              1e-12);
  EXPECT_EQ(model->pass_plan(conv, TrainingPass::backward_data, 32).cast_time.value, 0);
  // The softmax stays on autocast's FP32 list.
  EXPECT_EQ(model->pass_plan(f.index("softmax1"), TrainingPass::forward, 32).precision,
            Precision::fp32);
  // The step: GradScaler's unscale (8 bytes) then SGD (20), two kernels per tensor.
  EXPECT_NEAR(model->update_time(static_cast<long>(n)).value,
              28 * n / bw + 2 * f.params.launch_overhead.value + f.params.framework_overhead.value,
              1e-12);
}

// Megatron-LM's FP8 (Transformer Engine): a transformer layer's linear layer runs in FP8, casts
// its input in forward and its output gradient in backward-data (4 bytes per element each:
// 2 read, FP8 data and transpose written), and its weight with the transpose in forward (4
// bytes per element, which `train` pays once per iteration); the output layer, outside the
// transformer layers, runs in BF16 without casts.
TEST(PrecisionRecipes, Fp8CastsATransformerLinearsInputGradientAndWeight) {
  const Fixture f("mcore-gpt-1.7b", "H100-SXM");
  wl::Workload w = f.workload;
  wl::set_precision(w, "fp8", Origin{"--precision", 0});
  const wl::PrecisionRecipe recipe = wl::load_framework("megatron-lm").precision_of(w);
  const auto model =
      make_analytic_model(w, wl::compute_costs(w), f.gpu, f.params, f.policy, recipe);
  int first_linear = -1, logits = -1;
  for (size_t i = 0; i < w.layers.size(); ++i) {
    if (w.layers[i].type != wl::LayerType::Conv) continue;
    if (first_linear < 0) first_linear = static_cast<int>(i);
    logits = static_cast<int>(i);
  }
  const wl::Layer& fc = w.layers[static_cast<size_t>(first_linear)];
  const int batch = 2;
  const double in = batch * static_cast<double>(fc.input.elements());
  const double out = batch * static_cast<double>(fc.output.elements());
  const double weights = wl::weight_elements(fc);
  const double bw = f.gpu.copy_bandwidth().value * f.params.memory(KernelClass::elementwise);
  const double launch = f.params.launch_overhead.value;
  const PassPlan forward = model->pass_plan(first_linear, TrainingPass::forward, batch);
  EXPECT_EQ(forward.precision, Precision::fp8);
  EXPECT_NEAR(forward.weight_cast_time.value, 4 * weights / bw + launch, 1e-12);
  EXPECT_NEAR(forward.cast_time.value, 4 * weights / bw + 4 * in / bw + 2 * launch, 1e-12);
  const PassPlan backward_data = model->pass_plan(first_linear, TrainingPass::backward_data, batch);
  EXPECT_NEAR(backward_data.cast_time.value, 4 * out / bw + launch, 1e-12);
  EXPECT_EQ(backward_data.weight_cast_time.value, 0);
  EXPECT_EQ(model->pass_plan(first_linear, TrainingPass::backward_weights, batch).cast_time.value,
            0);
  const PassPlan output_layer = model->pass_plan(logits, TrainingPass::forward, batch);
  EXPECT_EQ(output_layer.precision, Precision::bf16);
  EXPECT_EQ(output_layer.cast_time.value, 0);
}

TEST(PrecisionRecipes, ARecipeOnAGpuWithoutItsTensorCoresIsAnError) {
  const Fixture f("lenet");
  wl::PrecisionRecipe bf16;
  bf16.name = "bf16";
  bf16.gemm_math = wl::Math::bf16;
  bf16.activation_bytes = 2;
  EXPECT_THAT(config_error_of([&] {
                make_analytic_model(f.workload, f.costs, f.gpu, f.params, f.policy, bf16);
              }),
              HasSubstr("GPU V100-SXM2 has no bf16 Tensor Cores"));
}

TEST(LayersToKernels, NameAndBadArguments) {
  const Fixture f("lenet");
  EXPECT_EQ(f.model->name(), "analytic V100-SXM2");
  EXPECT_THROW(f.model->layer_times(-1, 32), std::out_of_range);
  EXPECT_THROW(f.model->layer_times(static_cast<int>(f.workload.layers.size()), 32),
               std::out_of_range);
  EXPECT_THROW(f.model->layer_times(1, 0), std::invalid_argument);
}

// --- Measured profiles --------------------------------------------------------------------------

// LeNet's layers at batches 16 and 32 (times made up, round). conv1 lists a backward_data time
// although the first layer has no such pass: the model ignores it.
std::string lenet_profile(const std::string& workload = "lenet", const std::string& skip = "") {
  std::string text = "gpu: V100-SXM2\ndriver: \"418.67\"\ncuda: \"10.1\"\ncudnn: \"7.6.2\"\n"
                     "framework: MXNet 1.2.0 (NGC 18.04)\nprecision: fp32\nworkload: " +
                     workload + "\nlayers:\n";
  const std::vector<std::string> layers{"conv1", "tanh1", "pool1", "conv2", "tanh2",
                                        "pool2", "fc1",   "tanh3", "fc2",   "softmax1"};
  for (const std::string& layer : layers) {
    if (layer == skip) continue;
    text += "  " + layer + ":\n"
            "    16: {forward: 1 ms, backward_data: 2 ms, backward_weights: 3 ms}\n"
            "    32: {forward: 2 ms, backward_data: 4 ms, backward_weights: 6 ms}\n";
  }
  return text;
}

TEST(ProfileModel, TakesMeasuredTimesForThePassesEachLayerHas) {
  const Fixture f("lenet");
  const std::string path = write_temp_file("lenet-profile.yaml", lenet_profile());
  const MeasuredProfile profile = load_profile(path);
  const auto model =
      make_profile_model(f.workload, f.costs, profile, f.gpu, f.params, f.policy, f.recipe);
  EXPECT_EQ(model->name(), "profile " + path);

  const LayerTimes conv1 = model->layer_times(f.index("conv1"), 32);
  EXPECT_DOUBLE_EQ(conv1.forward.value, 2e-3);
  EXPECT_EQ(conv1.backward_data.value, 0);  // the first layer: no backward-data
  EXPECT_DOUBLE_EQ(conv1.backward_weights.value, 6e-3);

  const LayerTimes tanh1 = model->layer_times(f.index("tanh1"), 24);  // interpolated
  EXPECT_DOUBLE_EQ(tanh1.forward.value, 1.5e-3);
  EXPECT_DOUBLE_EQ(tanh1.backward_data.value, 3e-3);
  EXPECT_EQ(tanh1.backward_weights.value, 0);  // no parameters

  EXPECT_DOUBLE_EQ(model->layer_times(f.index("fc1"), 64).backward_weights.value, 12e-3);
  const LayerTimes input = model->layer_times(0, 32);
  EXPECT_EQ(input.forward.value + input.backward_data.value + input.backward_weights.value, 0);

  // What a profile does not hold comes from the analytic model.
  EXPECT_DOUBLE_EQ(model->reduction_time(1e8).value, f.model->reduction_time(1e8).value);
  EXPECT_DOUBLE_EQ(model->update_time(1000).value, f.model->update_time(1000).value);
}

TEST(ProfileModel, AMissingLayerIsAConfigErrorNamingTheFile) {
  const Fixture f("lenet");
  const std::string path = write_temp_file("lenet-no-pool2.yaml", lenet_profile("lenet", "pool2"));
  const std::string error = f.profile_model_error(path);
  EXPECT_THAT(error, HasSubstr(path + ":8: "));  // its `layers:` line
  EXPECT_THAT(error, HasSubstr("'pool2'"));
}

TEST(ProfileModel, ALayerTheWorkloadLacksIsAConfigErrorAtItsLine) {
  const Fixture f("lenet");
  std::string text = lenet_profile();
  text.replace(text.find("  fc2:"), 6, "  fc3:");
  const std::string path = write_temp_file("lenet-fc3.yaml", text);
  const std::string error = f.profile_model_error(path);
  EXPECT_EQ(error, path + ":33: profile layer 'fc3' is no layer of lenet (did you mean 'fc2'?)");
}

TEST(ProfileModel, AnotherWorkloadsProfileIsAConfigErrorNamingTheFile) {
  const Fixture f("lenet");
  const std::string path = write_temp_file("alexnet-profile.yaml", lenet_profile("alexnet"));
  const std::string error = f.profile_model_error(path);
  EXPECT_THAT(error, HasSubstr(path + ":7: "));  // its `workload:` line
  EXPECT_THAT(error, HasSubstr("'alexnet', not 'lenet'"));
}

// --- Profiles measured on another GPU -------------------------------------------------------------

// lenet_profile() measured on `gpu`, with a measured launch overhead when `launch` is given.
std::string lenet_profile_on(const std::string& gpu, const std::string& launch = "") {
  std::string text = lenet_profile();
  text.replace(0, text.find('\n'), "gpu: " + gpu);
  if (!launch.empty()) {
    text += "microbenchmarks:\n  launch_overhead: " + launch +
            "\n  device_copy_bandwidth: 4200 GB/s\n  host_to_device: 55 GB/s\n"
            "  device_to_host: 55 GB/s\n";
  }
  return text;
}

TEST(ProfileModel, AProfileFromAnotherGpuIsProjectedByItsRoofline) {
  const Fixture f("lenet");  // on a V100-SXM2
  const std::string path = write_temp_file("lenet-h200.yaml", lenet_profile_on("H200-SXM", "2 us"));
  const auto model = make_profile_model(f.workload, f.costs, load_profile(path), f.gpu, f.params, f.policy,
                                        f.recipe);
  EXPECT_EQ(model->name(), "profile " + path + " (measured on H200-SXM, projected to V100-SXM2)");
  const GpuSpec h200 = load_gpu_spec("H200-SXM");
  const double launch_v100 = f.params.launch_overhead.value;  // 8 us

  // conv2's backward-data at batch 16 (one kernel, 174 FLOP/B: compute-bound on both GPUs, whose
  // fp32 ridges are 16 and 20 FLOP/B): the measured 2 ms less H200's launch, times the fp32 peak
  // ratio 67 / 15.7, plus the V100's launch.
  EXPECT_NEAR(model->layer_times(f.index("conv2"), 16).backward_data.value,
              launch_v100 + (2e-3 - 2e-6) * h200.peak_fp32.value / f.gpu.peak_fp32.value, 1e-12);
  EXPECT_GT(model->layer_times(f.index("conv2"), 16).backward_data.value, 4 * 2e-3);
  // tanh1's backward-data (one streaming kernel): the copy-bandwidth ratio, 4224 / 780 GB/s.
  EXPECT_NEAR(model->layer_times(f.index("tanh1"), 16).backward_data.value,
              launch_v100 + (2e-3 - 2e-6) * h200.copy_bandwidth().value /
                                f.gpu.copy_bandwidth().value,
              1e-12);
  // Reductions and updates stay analytic on the simulated GPU.
  EXPECT_DOUBLE_EQ(model->reduction_time(1e8).value, f.model->reduction_time(1e8).value);
  EXPECT_DOUBLE_EQ(model->update_time(1000).value, f.model->update_time(1000).value);
}

TEST(ProfileModel, WithoutMicrobenchmarksTheMeasuringGpusLaunchIsTheAnalyticConstant) {
  const Fixture f("lenet");
  const std::string path = write_temp_file("lenet-h200-bare.yaml", lenet_profile_on("H200-SXM"));
  const auto model = make_profile_model(f.workload, f.costs, load_profile(path), f.gpu, f.params, f.policy,
                                        f.recipe);
  const double launch = f.params.launch_overhead.value;
  const double peak_ratio = load_gpu_spec("H200-SXM").peak_fp32.value / f.gpu.peak_fp32.value;
  EXPECT_NEAR(model->layer_times(f.index("conv2"), 16).backward_data.value,
              launch + (2e-3 - launch) * peak_ratio, 1e-12);
}

TEST(ProfileModel, TheSameGpuInAnyCaseIsNotProjected) {
  const Fixture f("lenet");
  const std::string path = write_temp_file("lenet-lower.yaml", lenet_profile_on("v100-sxm2", "2 us"));
  const auto model = make_profile_model(f.workload, f.costs, load_profile(path), f.gpu, f.params, f.policy,
                                        f.recipe);
  EXPECT_EQ(model->name(), "profile " + path);
  EXPECT_DOUBLE_EQ(model->layer_times(f.index("conv2"), 16).backward_data.value, 2e-3);
}

TEST(ProfileModel, AGpuWithoutASpecIsAConfigErrorAtTheProfilesGpuLine) {
  const Fixture f("lenet");
  const std::string path = write_temp_file("lenet-h100.yaml", lenet_profile_on("H100-PCIe"));
  const std::string error = f.profile_model_error(path);
  EXPECT_THAT(error, HasSubstr(path + ":1: the profile was measured on GPU 'H100-PCIe', which has "
                               "no spec to project its times to V100-SXM2 from (shipped: "));
  EXPECT_THAT(error, HasSubstr("h200-sxm"));
  EXPECT_THAT(error, HasSubstr("h100-pcie.yaml"));
}

TEST(ProfileModel, AProfileOfAnotherPrecisionThanTheWorkloadsIsAConfigError) {
  const Fixture f("lenet");
  std::string text = lenet_profile();
  text.replace(text.find("precision: fp32"), 15, "precision: tensor");
  const std::string path = write_temp_file("lenet-tensor.yaml", text);
  const std::string error = f.profile_model_error(path);
  EXPECT_THAT(error, HasSubstr(path + ": profile measured at precision tensor for a workload in "
                               "fp32"));
}

}  // namespace
}  // namespace gpuscale::compute
