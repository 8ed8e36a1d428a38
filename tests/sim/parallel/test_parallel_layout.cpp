// Megatron-LM layouts without an engine: GPT-3 175B's transformer shape read from its workload,
// the validity rules (one-line errors), memory per GPU against numbers computed by hand from
// Megatron-LM's bytes per parameter of each precision recipe and Korthikanti et al.'s Table 2,
// the 1F1B order and the closed forms.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/parallel/layout.hpp"
#include "sim/parallel/one_f_one_b.hpp"
#include "sim/parallel/parallel_memory.hpp"
#include "sim/parallel/transformer_shape.hpp"
#include "topologies/core/error.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::par {
namespace {

using ::testing::HasSubstr;

TransformerShape gpt3() {
  const wl::Workload w = wl::load_workload("gpt3-175b");
  return transformer_shape(w, wl::compute_costs(w));
}

// Megatron-LM's recipe `name` (workloads/frameworks/megatron-lm.yaml).
wl::PrecisionRecipe megatron(const std::string& name) {
  wl::Workload w;
  wl::set_precision(w, name, {});
  return wl::load_framework("megatron-lm").precision_of(w);
}

ParallelLayout megatron_175b() {  // Narayanan et al. SC'21's GPT-3 layout, 1,024 GPUs
  ParallelLayout l;
  l.tp = 8;
  l.pp = 16;
  l.dp = 8;
  l.micro_batch = 1;
  l.global_batch = 1536;
  return l;
}

TEST(TransformerShape, Gpt3HasItsPublishedDimensions) {
  const TransformerShape s = gpt3();
  EXPECT_EQ(s.layers, 96);
  EXPECT_EQ(s.hidden, 12288);
  EXPECT_EQ(s.heads, 96);
  EXPECT_EQ(s.sequence, 2048);
  EXPECT_EQ(s.vocab, 51200);
  // 12 h^2 + 13 h per layer; token and position embeddings before; the output layer is tied.
  EXPECT_EQ(s.block_params[0], 12L * 12288 * 12288 + 13L * 12288);
  EXPECT_EQ(s.pre_params, (51200L + 2048) * 12288);
  EXPECT_EQ(s.tied_params, 51200L * 12288);
  long total = s.pre_params + s.post_params;
  for (long p : s.block_params) total += p;
  EXPECT_EQ(total, 174615846912L);  // the workload file's count, [nar21]'s 174.6B
}

TEST(ParallelLayout, InvalidLayoutsGiveOneLineErrors) {
  const TransformerShape s = gpt3();
  const auto error_of = [&](ParallelLayout l) -> std::string {
    try {
      check_layout(l, s, 8);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  ParallelLayout l = megatron_175b();
  EXPECT_EQ(error_of(l), "");
  l.tp = 5;
  EXPECT_THAT(error_of(l), HasSubstr("--tp: 5 does not divide the model's 96 attention heads"));
  l.tp = 16;
  EXPECT_THAT(error_of(l), HasSubstr("--tp: 16 is more than the 8 GPUs of a node"));
  l = megatron_175b();
  l.pp = 5;
  EXPECT_THAT(error_of(l), HasSubstr("--pp: 5 does not divide the model's 96 transformer layers"));
  l = megatron_175b();
  l.global_batch = 1540;
  EXPECT_THAT(error_of(l), HasSubstr("--global-batch: 1540 is not a multiple of micro-batch x DP"));
  l = megatron_175b();
  l.dp = 0;
  EXPECT_THAT(error_of(l), HasSubstr("--dp: must be at least 1"));
  for (const std::string& e : {error_of(l)}) EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST(ParallelMemory, Gpt3Tp8Pp16Dp8AgainstHandComputedBytes) {
  const TransformerShape s = gpt3();
  const ParallelLayout l = megatron_175b();
  const std::vector<StageMemory> m = stage_memory(s, l, megatron("fp16"));
  ASSERT_EQ(m.size(), 16u);
  // Stage 0: 6 layers of 12h^2 + 13h and the two embeddings, over t = 8:
  // (6 x 1,812,099,072 + 53,248 x 12,288) / 8 = 1,440,863,232 parameters per GPU.
  EXPECT_DOUBLE_EQ(m[0].params_per_gpu, 1440863232.0);
  EXPECT_DOUBLE_EQ(m[0].weights, 2 * 1440863232.0);
  EXPECT_DOUBLE_EQ(m[0].gradients, 2 * 1440863232.0);
  // FP32 main parameters and gradients, momentum and variance: 4 + 4 + 8.
  EXPECT_DOUBLE_EQ(m[0].optimizer, 16 * 1440863232.0);
  // Korthikanti Table 2, t = 8: s b h (10 + 24/8 + 5 x 96 x 2048 / (12288 x 8)) = 23 s b h
  // = 578,813,952 bytes per layer; the first stage holds p = 16 micro-batches of 6 layers.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, l), 578813952.0);
  EXPECT_EQ(m[0].micro_batches_in_flight, 16);
  EXPECT_DOUBLE_EQ(m[0].activations, 96 * 578813952.0);
  EXPECT_NEAR(m[0].total() / 1e9, 84.38, 0.005);
  // The last stage: one micro-batch in flight, and the tied output layer's copy.
  EXPECT_EQ(m[15].micro_batches_in_flight, 1);
  EXPECT_DOUBLE_EQ(m[15].params_per_gpu,
                   (6 * 1812099072.0 + 2 * 12288 + 51200.0 * 12288) / 8);  // + final norm
  // ZeRO-1 divides the optimizer state by d only.
  ParallelLayout z = l;
  z.zero1 = true;
  EXPECT_DOUBLE_EQ(stage_memory(s, z, megatron("fp16"))[0].optimizer, 16 * 1440863232.0 / 8);
  EXPECT_DOUBLE_EQ(stage_memory(s, z, megatron("fp16"))[0].weights, m[0].weights);
}

// Megatron-LM's own table of bytes per parameter (docs/source/distrib_optimizer.md at
// core_r0.8.0, lines 9-15), without and with the distributed optimizer over d replicas:
// FP16 20 and 4 + 16/d, BF16 18 and 6 + 12/d, FP32 16 and 8 + 8/d; FP8 is BF16's plus the
// FP8 weight with its transpose on each transformer layer's parameters.
TEST(ParallelMemory, BytesPerParameterAsMegatronsTableGivesThem) {
  const TransformerShape s = gpt3();
  ParallelLayout l = megatron_175b();
  const double psi = 1440863232.0;
  const auto per_param = [&](const std::string& recipe, bool zero1) {
    l.zero1 = zero1;
    const StageMemory m = stage_memory(s, l, megatron(recipe))[0];
    return (m.weights + m.gradients + m.optimizer) / psi;
  };
  EXPECT_DOUBLE_EQ(per_param("fp16", false), 20);
  EXPECT_DOUBLE_EQ(per_param("fp16", true), 4 + 16.0 / 8);
  EXPECT_DOUBLE_EQ(per_param("bf16", false), 18);
  EXPECT_DOUBLE_EQ(per_param("bf16", true), 6 + 12.0 / 8);
  EXPECT_DOUBLE_EQ(per_param("fp32", false), 16);
  EXPECT_DOUBLE_EQ(per_param("fp32", true), 8 + 8.0 / 8);
  const double block_params = 6 * 1812099072.0 / 8;  // stage 0's transformer layers, over t
  EXPECT_DOUBLE_EQ(per_param("fp8", false), 18 + 2 * block_params / psi);
  // Activations: FP32 doubles Korthikanti's 16-bit bytes.
  l.zero1 = false;
  EXPECT_DOUBLE_EQ(stage_memory(s, l, megatron("fp32"))[0].activations,
                   2 * stage_memory(s, l, megatron("fp16"))[0].activations);
}

TEST(ParallelMemory, ActivationsFollowKorthikantiTable2) {
  const TransformerShape s = gpt3();
  ParallelLayout l = megatron_175b();
  const double sbh = 2048.0 * 12288;
  l.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, l), sbh * (34.0 / 8 + 10));
  l.recompute = Recompute::Selective;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, l), sbh * 34.0 / 8);
  l.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, l), sbh * (10 + 24.0 / 8));
  l.recompute = Recompute::Full;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, l), 2 * sbh);
  // The first stage holds L layers' worth whatever p is ([kor23] sec. 4.2.3).
  l.recompute = Recompute::None;
  for (int p : {2, 8, 32}) {
    l.pp = p;
    EXPECT_DOUBLE_EQ(stage_memory(s, l, megatron("fp16"))[0].activations,
                     96 * layer_activation_bytes(s, l))
        << p;
  }
}

// Fused attention (FlashAttention-2) keeps no a x s x s tensor: Korthikanti's 5 a s / (h t) term
// becomes the logsumexp's 4 a / (h t) (a s b fp32 values); the rest of Table 2 is unchanged.
TEST(ParallelMemory, FusedAttentionDropsTheSquareTerm) {
  TransformerShape s = gpt3();
  ASSERT_FALSE(s.fused_attention);
  s.fused_attention = true;
  ParallelLayout l = megatron_175b();
  const double sbh = 2048.0 * 12288;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, l), sbh * (10 + 24.0 / 8 + 4.0 * 96 / (12288 * 8)));
  l.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, l), sbh * (34.0 / 8 + 4.0 * 96 / (12288 * 8)));
  l.recompute = Recompute::Selective;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, l), sbh * 34.0 / 8);

  // The shape carries the workload's declaration.
  const wl::Workload mcore = wl::load_workload("mcore-gpt-1.7b");
  EXPECT_TRUE(transformer_shape(mcore, wl::compute_costs(mcore)).fused_attention);
  const wl::Workload what_if = wl::load_workload("gpt3-175b", {"args.fused_attention=true"});
  const TransformerShape fused = transformer_shape(what_if, wl::compute_costs(what_if));
  EXPECT_TRUE(fused.fused_attention);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(fused, megatron_175b()),
                   sbh * (10 + 24.0 / 8 + 4.0 * 96 / (12288 * 8)));
}

TEST(OneFOneB, WarmUpSteadyStateCoolDown) {
  using S = PassStep;
  // Stage 0 of 4, 6 micro-batches: 3 warm-up forwards, then F/B pairs, then 3 backwards.
  EXPECT_EQ(one_f_one_b(0, 4, 6),
            (std::vector<S>{{true, 0}, {true, 1}, {true, 2}, {true, 3}, {false, 0}, {true, 4},
                            {false, 1}, {true, 5}, {false, 2}, {false, 3}, {false, 4},
                            {false, 5}}));
  // The last stage alternates from the start.
  EXPECT_EQ(one_f_one_b(3, 4, 2), (std::vector<S>{{true, 0}, {false, 0}, {true, 1}, {false, 1}}));
  // Fewer micro-batches than the warm-up: all forwards, then all backwards.
  EXPECT_EQ(one_f_one_b(0, 4, 2), (std::vector<S>{{true, 0}, {true, 1}, {false, 0}, {false, 1}}));
}

TEST(ClosedForms, BubbleAndFlops) {
  EXPECT_DOUBLE_EQ(bubble_fraction(16, 192), 15.0 / 207);
  EXPECT_DOUBLE_EQ(bubble_fraction(1, 8), 0);
  const TransformerShape s = gpt3();
  // [nar21] eq. 3 counts a recomputed forward: 4/3 of the model's 72 B s L h^2 (1 + s/6h) for
  // the layers; the logits are not recomputed in either.
  const double B = 1536, sq = 2048, L = 96, h = 12288, V = 51200;
  EXPECT_DOUBLE_EQ(narayanan_flops_per_iteration(s, 1536),
                   96 * B * sq * L * h * h * (1 + sq / (6 * h) + V / (16 * L * h)));
  EXPECT_NEAR(model_flops_per_iteration(s, 1536) /
                  (0.75 * narayanan_flops_per_iteration(s, 1536) + 1.5 * B * sq * h * V),
              1, 1e-12);
}

TEST(ValidLayouts, EveryLayoutOf1024GpusForGpt3) {
  ParallelLayout base = megatron_175b();
  const std::vector<ParallelLayout> all = valid_layouts(base, 1024, {}, {}, gpt3(), 8);
  // t in {1,2,4,8}, p a power of two dividing 96 (1..32), d = 1024/(t p) with 1536 % d == 0
  // (d <= 512): p = 1 needs d = 1024/t <= 512, so t >= 2.
  for (const ParallelLayout& l : all) {
    EXPECT_EQ(l.gpus(), 1024);
    EXPECT_EQ(1536 % (l.dp * l.micro_batch), 0);
  }
  EXPECT_EQ(all.size(), 4u * 6 - 1);
  EXPECT_EQ(valid_layouts(base, 1024, {8}, {16}, gpt3(), 8).size(), 1u);
}

}  // namespace
}  // namespace gpuscale::par
