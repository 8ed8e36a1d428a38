// TrainResult's one codec (train_result_codec.hpp): a layout's result comes back equal, every
// double bit for bit.
#include <gtest/gtest.h>

#include "sim/engine/isolated.hpp"
#include "sim/parallel/train_result_codec.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale::par {
namespace {

using testing::bits_of;

TrainResult every_field_set() {
  TrainResult t;
  t.topology = "dgx-h200-superpod";
  t.gpu = "H200-SXM";
  t.precision = "fp8";
  t.precision_runs_as = "Megatron-LM --bf16 --fp8-format hybrid";
  t.layout = {.tp = 8, .pp = 16, .dp = 8, .micro_batch = 1, .global_batch = 1536, .zero1 = true,
              .sequence_parallel = true, .recompute = Recompute::Selective};
  t.micro_batches = 192;
  t.sim.iteration_s = 1.0 / 3;
  t.sim.pipeline_s = 0.3;
  t.sim.bubble = 0.07;
  t.sim.tp_allreduce_s = 1e-5;
  t.sim.tp_bytes_per_gpu = 2.5e7;
  t.sim.pp_transfer_s = 2.0 / 7;
  t.sim.stages = {{0.1, 0.2, 0.3, 0.4, 0.5}, {1.0 / 9, 0.22, 0.33, 0.44, 0.55}};
  t.sim.activities = 123456789L;
  t.stage_times = {{0.01, 0.02, 0.003}, {1.0 / 11, 0.04, 1.0 / 13}};
  t.bubble_closed_form = 15.0 / 207;
  t.memory = {{1e9, 2e9, 3e9, 4e9, 5e9, 16}, {1.0 / 3, 0.5, 0.25, 0.125, 0.0625, 1}};
  t.memory_per_gpu = 7.5e10;
  t.gpu_memory = 1.41e11;
  t.fits = true;
  t.tokens_per_s = 123456.789;
  t.mfu = 0.4711;
  t.tflops_per_gpu_eq3 = 163.2;
  t.tp_comm_s = 0.012;
  t.pp_comm_s = 0.034;
  t.dp_comm_s = 0.056;
  t.wall_s = 3.5;
  return t;
}

TEST(TrainResultCodec, AResultComesBackEqualEveryDoubleBitForBit) {
  const TrainResult t = every_field_set();
  const TrainResult back = sim::decode_result<TrainResult>(sim::encode_result(t));
  EXPECT_EQ(back.topology, t.topology);
  EXPECT_EQ(back.gpu, t.gpu);
  EXPECT_EQ(back.precision, t.precision);
  EXPECT_EQ(back.precision_runs_as, t.precision_runs_as);
  EXPECT_EQ(back.layout.str(), t.layout.str());
  EXPECT_EQ(back.layout.zero1, t.layout.zero1);
  EXPECT_EQ(back.layout.sequence_parallel, t.layout.sequence_parallel);
  EXPECT_EQ(back.layout.recompute, t.layout.recompute);
  EXPECT_EQ(back.micro_batches, t.micro_batches);
  for (const auto field : {&PipelineResult::iteration_s, &PipelineResult::pipeline_s,
                           &PipelineResult::bubble, &PipelineResult::tp_allreduce_s,
                           &PipelineResult::tp_bytes_per_gpu, &PipelineResult::pp_transfer_s}) {
    EXPECT_EQ(bits_of(back.sim.*field), bits_of(t.sim.*field));
  }
  ASSERT_EQ(back.sim.stages.size(), t.sim.stages.size());
  for (size_t k = 0; k < t.sim.stages.size(); ++k) {
    for (const auto field : {&StageResult::busy_s, &StageResult::bubble,
                             &StageResult::last_backward_s, &StageResult::dp_s,
                             &StageResult::end_s}) {
      EXPECT_EQ(bits_of(back.sim.stages[k].*field), bits_of(t.sim.stages[k].*field)) << k;
    }
  }
  EXPECT_EQ(back.sim.activities, t.sim.activities);
  ASSERT_EQ(back.stage_times.size(), t.stage_times.size());
  for (size_t k = 0; k < t.stage_times.size(); ++k) {
    EXPECT_EQ(bits_of(back.stage_times[k].forward_s), bits_of(t.stage_times[k].forward_s));
    EXPECT_EQ(bits_of(back.stage_times[k].backward_s), bits_of(t.stage_times[k].backward_s));
    EXPECT_EQ(bits_of(back.stage_times[k].weight_cast_s), bits_of(t.stage_times[k].weight_cast_s));
  }
  ASSERT_EQ(back.memory.size(), t.memory.size());
  for (size_t k = 0; k < t.memory.size(); ++k) {
    for (const auto field : {&StageMemory::params_per_gpu, &StageMemory::weights,
                             &StageMemory::gradients, &StageMemory::optimizer,
                             &StageMemory::activations}) {
      EXPECT_EQ(bits_of(back.memory[k].*field), bits_of(t.memory[k].*field)) << k;
    }
    EXPECT_EQ(back.memory[k].micro_batches_in_flight, t.memory[k].micro_batches_in_flight);
  }
  for (const auto field : {&TrainResult::bubble_closed_form, &TrainResult::memory_per_gpu,
                           &TrainResult::gpu_memory, &TrainResult::tokens_per_s,
                           &TrainResult::mfu, &TrainResult::tflops_per_gpu_eq3,
                           &TrainResult::tp_comm_s, &TrainResult::pp_comm_s,
                           &TrainResult::dp_comm_s, &TrainResult::wall_s}) {
    EXPECT_EQ(bits_of(back.*field), bits_of(t.*field));
  }
  EXPECT_EQ(back.fits, t.fits);
}

TEST(TrainResultCodec, EveryRecomputeModeComesBackByName) {
  for (const Recompute mode : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    ParallelLayout l;
    l.recompute = mode;
    EXPECT_EQ(nlohmann::json(l).at("recompute"), to_string(mode));
    EXPECT_EQ(nlohmann::json(l).get<ParallelLayout>().recompute, mode);
  }
}

}  // namespace
}  // namespace gpuscale::par
