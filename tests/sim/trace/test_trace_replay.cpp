// Imported iterations replayed on machines: compute alone costs its sum; one allreduce on a
// uniform ring costs the alpha-beta ring closed form; the weight-gradient collectives overlap
// the backward; a thousand GPUs replay under symmetry; the same input gives the same result.
// Every replay runs in a child process (run_trace_job): SimGrid allows one engine per process.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/trace/trace_job.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/interop/astra_sim_text.hpp"

namespace gpuscale::sim {
namespace {

using gpuscale::testing::config_error_of;

const std::string kData = std::string(GPUSCALE_SOURCE_DIR) + "/tests/interop/data/";

interop::TraceGraph astra_sim(const std::string& file) {
  return interop::astra_sim_iteration(interop::load_astra_sim_workload(kData + file));
}

TraceJob job(const std::string& topology, int gpus, const std::string& protocol = "auto") {
  TraceJob j;
  j.topology = topology;
  j.gpus = gpus;
  j.protocol = protocol;
  return j;
}

// p GPUs on a ring of single 25 GB/s NVLinks of 1 us latency (as tests/sim/replay/test_replay.cpp).
std::string uniform_ring(int p) {
  std::string yaml =
      "name: uniform-ring\nlink_kinds:\n  nvlink: {lane_bandwidth: 25 GB/s, latency: 1 us}\n"
      "devices:\n";
  for (int i = 0; i < p; ++i) {
    yaml += fmt::format("  gpu{}: {{kind: gpu, model: V100-SXM2, memory: 16 GB}}\n", i);
  }
  yaml += "links:\n";
  for (int i = 0; i < p; ++i) {
    yaml += fmt::format("  - {{a: gpu{}, b: gpu{}, kind: nvlink, lanes: 1}}\n", i, (i + 1) % p);
  }
  return testing::write_temp_file(fmt::format("uniform-ring-{}.yaml", p), yaml);
}

TEST(TraceReplay, ComputeAloneCostsItsSum) {
  const TraceJobResult r = run_trace_job(astra_sim("compute-only.txt"), job("dgx-h200", 8));
  EXPECT_NEAR(r.replay.iteration_s, 19000e-9, 1e-12);
  EXPECT_NEAR(r.replay.compute_s, 19000e-9, 1e-12);
  EXPECT_EQ(r.replay.communication_s, 0);
  EXPECT_EQ(r.replay.kernels, 5);
  EXPECT_EQ(r.topology, "dgx-h200");
}

// NCCL's ring over p GPUs: 2(p-1) steps of S/p each, over both directions of the ring (the
// placement's two channels), each direction carrying half: 2(p-1)/p (S/2)/B + 2(p-1) alpha.
TEST(TraceReplay, OneAllreduceOnAUniformRingIsTheRingClosedForm) {
  const int p = 8;
  const double S = 100e6, B = 25e9, alpha = 1e-6;
  const TraceJobResult r =
      run_trace_job(astra_sim("one-allreduce.txt"), job(uniform_ring(p), p, "ideal"));
  const Placement placement = [&] {
    const topo::Topology t = machine_for(uniform_ring(p), {}, p);
    return place_job(t, p);
  }();
  const double channels = static_cast<double>(placement.rings.size());
  const double expected = 2.0 * (p - 1) / p * S / channels / B + 2.0 * (p - 1) * alpha;
  EXPECT_NEAR(r.replay.iteration_s / expected, 1.0, 0.01) << channels << " channels";
  EXPECT_EQ(r.replay.collectives, 1);
  EXPECT_NEAR(r.replay.exposed_communication_s, r.replay.iteration_s, 1e-12);
}

TEST(TraceReplay, GradientCollectivesOverlapTheBackward) {
  const TraceJobResult r = run_trace_job(astra_sim("resnet50-like.txt"), job("dgx-h200", 8));
  const TraceResult& t = r.replay;
  EXPECT_EQ(t.kernels, 54 * 3 - 1);
  EXPECT_EQ(t.collectives, 54);
  EXPECT_GE(t.iteration_s, t.compute_s);
  EXPECT_LT(t.exposed_communication_s, t.communication_s);  // most of it hides
  EXPECT_NEAR(t.iteration_s, t.compute_s + t.exposed_communication_s, t.iteration_s * 0.05);
}

TEST(TraceReplay, AThousandGpusReplayUnderSymmetry) {
  const TraceJobResult r =
      run_trace_job(astra_sim("resnet50-like.txt"), job("dgx-h200-superpod", 1024));
  const TraceJobResult small = run_trace_job(astra_sim("resnet50-like.txt"), job("dgx-h200", 8));
  EXPECT_DOUBLE_EQ(r.replay.compute_s, small.replay.compute_s);
  EXPECT_GT(r.replay.communication_s, small.replay.communication_s);
  EXPECT_LT(r.wall_s, 30);
}

TEST(TraceReplay, SameInputSameResult) {
  const interop::TraceGraph g = astra_sim("resnet50-like.txt");
  for (int gpus : {8, 64}) {
    const TraceJob j = job(gpus > 8 ? "dgx-h200-superpod" : "dgx-h200", gpus);
    const TraceResult a = run_trace_job(g, j).replay, b = run_trace_job(g, j).replay;
    EXPECT_EQ(a.iteration_s, b.iteration_s) << gpus;
    EXPECT_EQ(a.exposed_communication_s, b.exposed_communication_s) << gpus;
    EXPECT_EQ(a.activities, b.activities) << gpus;
  }
}

TEST(TraceReplay, MessageToARankTheJobLacksIsAConfigError) {
  interop::TraceGraph g;
  g.source = "trace.0.et";
  g.nodes.push_back({interop::TraceNode::Kind::Send, "send", 0, {}, 1e6, 9, {}});
  EXPECT_EQ(config_error_of([&] { run_trace_job(g, job("dgx-h200", 8)); }),
            "trace.0.et: node 'send' sends to rank 9, but the job has 8 GPUs (run it on at least "
            "10 GPUs)");
}

TEST(TraceReplay, SendCostsACopyBetweenTwoGpus) {
  interop::TraceGraph g;
  g.source = "trace.0.et";
  g.nodes.push_back({interop::TraceNode::Kind::Send, "send", 0, {}, 1e9, 1, {}});
  const TraceResult r = run_trace_job(g, job("dgx-h200", 2)).replay;
  EXPECT_EQ(r.messages, 1);
  EXPECT_GT(r.iteration_s, 1e9 / 900e9);  // no faster than NVLink 4's 900 GB/s, both ways
  EXPECT_LT(r.iteration_s, 1e9 / 100e9);
}

}  // namespace
}  // namespace gpuscale::sim
