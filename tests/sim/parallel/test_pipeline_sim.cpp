// The 1F1B iteration on SimGrid (one engine per test process): with uniform stages and free
// communication its bubble is (p-1)/(m+p-1); the tensor-parallel allreduce puts
// 2(t-1)/t x its bytes on the links leaving each GPU; the data-parallel exchange comes after the
// pipeline and lengthens the iteration.
// (NVLS's allreduce on Hopper: (1 + 1/t) x its bytes.)
#include <gtest/gtest.h>

#include "sim/engine/isolated.hpp"
#include "sim/experiment/machine_setup.hpp"
#include "sim/parallel/layout.hpp"
#include "sim/parallel/pipeline_sim.hpp"
#include "sim/parallel/train_result_codec.hpp"

namespace gpuscale::par {
namespace {

struct Machine {
  explicit Machine(int gpus, const std::string& name = "dgx-h200-superpod")
      : topology(sim::machine_for(name, {}, gpus)),
        router(topology, topology.default_routing()) {}
  topo::Topology topology;
  topo::Router router;
};

PipelineJob uniform_job(const Machine& m, int tp, int pp, int dp, int micro_batches) {
  PipelineJob job;
  job.machine = &m.topology;
  job.router = &m.router;
  job.placement = sim::place_job(m.topology, tp * pp * dp);
  job.tp = tp;
  job.pp = pp;
  job.dp = dp;
  job.micro_batches = micro_batches;
  job.stages.assign(static_cast<size_t>(pp), StageWork{.forward_s = 0.010, .backward_s = 0.020});
  return job;  // activation_bytes 0: sends pay their routes' latency only (about a microsecond)
}

// Uniform stages (F 10 ms, B 20 ms) and zero-byte sends on 4 DGX H200 nodes: every stage is
// busy m (F + B) and the pipeline lasts (m + p - 1)(F + B). One engine per process: one case
// per test.
void expect_closed_form_bubble(int pp, int mb) {
  const Machine m(32);
  const PipelineResult r = simulate_pipeline(uniform_job(m, 1, pp, 1, mb));
  EXPECT_NEAR(r.bubble / bubble_fraction(pp, mb), 1, 0.01);
  EXPECT_NEAR(r.pipeline_s, (mb + pp - 1) * 0.030, 1e-3);
  for (const StageResult& s : r.stages) EXPECT_NEAR(s.busy_s, mb * 0.030, 1e-9);
}

TEST(PipelineSim, ClosedFormBubbleFourStagesEightMicroBatches) { expect_closed_form_bubble(4, 8); }
TEST(PipelineSim, ClosedFormBubbleEightStages32MicroBatches) { expect_closed_form_bubble(8, 32); }
TEST(PipelineSim, ClosedFormBubble32StagesOverNodes) { expect_closed_form_bubble(32, 64); }

// GPT-3 175B, b = 1: s b h x 2 bytes per allreduce, 12 a pass, on one node of `machine`.
PipelineResult tensor_parallel_allreduces(const std::string& machine) {
  const Machine m(8, machine);
  PipelineJob job = uniform_job(m, 8, 1, 1, 2);
  job.protocol = "simple";  // no LL/LL128 flag bytes on the wire
  job.tp_allreduce_bytes = 2048.0 * 12288 * 2;
  job.stages[0].forward_allreduces = 2 * 6;
  job.stages[0].backward_allreduces = 2 * 6;
  return simulate_pipeline(job);
}

// NCCL 2.7.8 runs a ring on A100s (no NVLS): per GPU, per layer and micro-batch, forward and
// backward: 4 x 2(t-1)/t x s b h x 2 bytes.
TEST(PipelineSim, TensorParallelAllreduceSendsItsRingShareFromEveryGpu) {
  const PipelineResult r = tensor_parallel_allreduces("dgx-a100-superpod");
  EXPECT_NEAR(4 * r.tp_bytes_per_gpu, 4 * 2.0 * 7 / 8 * 2048 * 12288 * 2, 1.0);
  EXPECT_GT(r.tp_allreduce_s, 0);
  // Each pass is its kernels and then its 12 allreduces.
  EXPECT_NEAR(r.stages[0].busy_s, 2 * (0.030 + 24 * r.tp_allreduce_s), 1e-9);
}

// On H200s NCCL 2.21.5 runs NVLS, where the switch reduces: (1 + 1/t) x s b h x 2 bytes.
TEST(PipelineSim, TensorParallelAllreduceOnHopperIsNvlsAndSendsLess) {
  const PipelineResult r = tensor_parallel_allreduces("dgx-h200-superpod");
  EXPECT_NEAR(4 * r.tp_bytes_per_gpu, 4 * (1 + 1.0 / 8) * 2048 * 12288 * 2, 1.0);
}

TEST(PipelineSim, DataParallelExchangeFollowsThePipeline) {
  const Machine m(32);
  PipelineJob job = uniform_job(m, 8, 2, 2, 4);
  job.tp_allreduce_bytes = 1e6;
  for (StageWork& s : job.stages) {
    s.gradient_bytes = 1e9;
    s.optimizer_s = 0.005;
  }
  const PipelineResult r = simulate_pipeline(job);
  for (const StageResult& s : r.stages) {
    EXPECT_GT(s.dp_s, 2.0 * 1 / 2 * 1e9 / 50e9);  // at least 2(d-1)/d S over one 50 GB/s NIC
    EXPECT_NEAR(s.end_s, s.last_backward_s + s.dp_s + 0.005, 1e-9);
  }
  EXPECT_GT(r.iteration_s, r.pipeline_s + 0.02);
}

// ZeRO-1 (Megatron's distributed optimizer): the reduce-scatter carries the gradients, the
// all-gather the updated parameters at the model's dtype. With BF16 parameters and FP32
// gradients the all-gather moves half the reduce-scatter's bytes, and the exchange takes less
// than with both at FP32's (a ring of each moves (d-1)/d of its bytes per GPU).
TEST(PipelineSim, ZeroOneGathersParametersAtTheirOwnDtype) {
  const Machine m(32);
  const auto exchange = [&](double parameter_bytes) {
    PipelineJob job = uniform_job(m, 8, 2, 2, 4);
    job.zero1 = true;
    for (StageWork& s : job.stages) {
      s.gradient_bytes = 2e9;
      s.parameter_bytes = parameter_bytes;
    }
    // One SimGrid engine per process: each exchange in a child.
    return sim::run_isolated_as([&] { return simulate_pipeline(job).stages.front().dp_s; });
  };
  const double fp32 = exchange(2e9), bf16 = exchange(1e9);
  EXPECT_LT(bf16, 0.8 * fp32);
  EXPECT_GT(bf16, 0.6 * fp32);
}

// Above 16 replicas each stage's data-parallel exchanges are evaluated side by side from their
// link loads; on 64 to 512 GPUs of a SuperPOD (32 replicas of t GPUs over 2 stages, the exchange
// after the pipeline) the iteration and every stage's exchange and end come out as SimGrid
// running every flow gives them, to a nanosecond, with and without ZeRO-1.
TEST(PipelineSim, ExchangesEvaluatedFromLinkLoadsAgreeWithEveryFlow) {
  for (bool zero1 : {false, true}) {
    for (int tp : {1, 2, 4, 8}) {
      const Machine m(tp * 2 * 32);
      auto run = [&](sim::FlowDetail detail) {
        PipelineJob job = uniform_job(m, tp, 2, 32, 4);
        job.zero1 = zero1;
        job.detail = detail;
        job.tp_allreduce_bytes = tp > 1 ? 1e6 : 0;
        for (StageWork& s : job.stages) {
          s.gradient_bytes = 1e9 / tp;
          s.parameter_bytes = 0.5e9 / tp;
          s.optimizer_s = 0.005;
        }
        return sim::run_isolated_as([&] { return simulate_pipeline(job); });
      };
      const PipelineResult flows = run(sim::FlowDetail::EveryFlow);
      const PipelineResult loads = run(sim::FlowDetail::AsReplayed);
      const std::string where = (zero1 ? "zero1 t=" : "t=") + std::to_string(tp);
      EXPECT_LT(loads.activities, flows.activities) << where;
      EXPECT_NEAR(loads.iteration_s, flows.iteration_s, 1e-9) << where;
      for (size_t k = 0; k < flows.stages.size(); ++k) {
        EXPECT_NEAR(loads.stages[k].dp_s, flows.stages[k].dp_s, 1e-9) << where << " stage " << k;
        EXPECT_NEAR(loads.stages[k].end_s, flows.stages[k].end_s, 1e-9) << where << " stage " << k;
      }
    }
  }
}

}  // namespace
}  // namespace gpuscale::par
