// ResultRow's one codec (result_row_codec.hpp): a row sent across a process or kept in the
// sweep's cache comes back equal, every double bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sim/engine/isolated.hpp"
#include "sim/experiment/result_row_codec.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale::sim {
namespace {

using testing::bits_of;

// Doubles whose shortest decimal text is long, or that sit at the ends of the range.
constexpr double kThird = 1.0 / 3;
const double kAboveOne = std::nextafter(1.0, 2.0);
constexpr double kTiny = std::numeric_limits<double>::denorm_min();
constexpr double kHuge = 6.02214076e23;

ResultRow every_field_set() {
  ResultRow r;
  r.topology = "dgx1-v100";
  r.workload = "resnet-50";
  r.comm = "nccl";
  r.scaling = "weak";
  r.exchange = "mxnet: horovod fusion 64 MiB every 5 ms";
  r.framework = "pytorch-horovod";
  r.precision = "amp";
  r.gpus = 8;
  r.batch = 32;
  r.accumulate = 4;
  r.spatial_ways = 4;
  r.iteration_s = 0.1;
  r.epoch_s = kHuge;
  r.speedup = kThird;
  r.throughput_img_s = 2345.678901234567;
  r.setup_s = kTiny;
  r.fpbp_s = kAboveOne;
  r.wu_s = 1e-300;
  r.exposed_comm_s = -0.0;
  r.input_wait_s = 0.2;
  r.overlap_s = 0.3;
  r.rest_s = -1.0 / 7;
  r.spread = {.samples = 100, .machine_varies = true, .p10_s = 0.11, .p50_s = 0.12,
              .p90_s = 0.13, .speedup_p10 = 7.1, .speedup_p50 = 7.2, .speedup_p90 = 7.3};
  r.memory_gpu0_gb = 15.5;
  r.memory_max_other_gb = 14.25;
  r.memory_before_training_gb = 1.0 / 9;
  r.gpu_memory_gb = 16;
  r.link_utilisation = {{"nvlink", {0.9, 0.45}}, {"pcie", {kThird, 1e-7}}};
  r.link_uses = {{3, true, 0.5}, {7, false, kThird}};
  r.allreduce_bytes = {{6.61e7, kThird, 1e-300}, {}, {4.02e7}};
  r.activities = 1L << 40;
  r.wall_s = 12.5;
  r.timeline.title = "resnet-50 nccl 8 GPUs batch 32";
  r.timeline.events = {{"gpu0 kernels", "fwd conv1", "forward", 0.001, kThird, "conv1",
                        "implicit_gemm", 0},
                       {"nvlink gpu0>gpu1", "nccl 98 MB", "link", 0.5, 0.75, "", "nccl_ring",
                        9.8e7}};
  return r;
}

void expect_same(const TimelineEvent& a, const TimelineEvent& b) {
  EXPECT_EQ(a.track, b.track);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.category, b.category);
  EXPECT_EQ(bits_of(a.start_s), bits_of(b.start_s));
  EXPECT_EQ(bits_of(a.end_s), bits_of(b.end_s));
  EXPECT_EQ(a.layer, b.layer);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(bits_of(a.bytes), bits_of(b.bytes));
}

void expect_same(const ResultRow& a, const ResultRow& b) {
  EXPECT_EQ(a.topology, b.topology);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.comm, b.comm);
  EXPECT_EQ(a.scaling, b.scaling);
  EXPECT_EQ(a.exchange, b.exchange);
  EXPECT_EQ(a.framework, b.framework);
  EXPECT_EQ(a.precision, b.precision);
  EXPECT_EQ(a.accumulate, b.accumulate);
  EXPECT_EQ(a.gpus, b.gpus);
  EXPECT_EQ(a.batch, b.batch);
  EXPECT_EQ(a.spatial_ways, b.spatial_ways);
  for (const auto field : {&ResultRow::iteration_s, &ResultRow::epoch_s, &ResultRow::speedup,
                           &ResultRow::throughput_img_s, &ResultRow::setup_s, &ResultRow::fpbp_s,
                           &ResultRow::wu_s, &ResultRow::exposed_comm_s, &ResultRow::input_wait_s,
                           &ResultRow::overlap_s, &ResultRow::rest_s, &ResultRow::memory_gpu0_gb,
                           &ResultRow::memory_max_other_gb, &ResultRow::memory_before_training_gb,
                           &ResultRow::gpu_memory_gb, &ResultRow::wall_s}) {
    EXPECT_EQ(bits_of(a.*field), bits_of(b.*field));
  }
  EXPECT_EQ(a.spread.samples, b.spread.samples);
  EXPECT_EQ(a.spread.machine_varies, b.spread.machine_varies);
  for (const auto field : {&IterationSpread::p10_s, &IterationSpread::p50_s,
                           &IterationSpread::p90_s, &IterationSpread::speedup_p10,
                           &IterationSpread::speedup_p50, &IterationSpread::speedup_p90}) {
    EXPECT_EQ(bits_of(a.spread.*field), bits_of(b.spread.*field));
  }
  ASSERT_EQ(a.link_utilisation.size(), b.link_utilisation.size());
  for (const auto& [kind, use] : a.link_utilisation) {
    ASSERT_TRUE(b.link_utilisation.contains(kind)) << kind;
    EXPECT_EQ(bits_of(use.max), bits_of(b.link_utilisation.at(kind).max)) << kind;
    EXPECT_EQ(bits_of(use.mean), bits_of(b.link_utilisation.at(kind).mean)) << kind;
  }
  ASSERT_EQ(a.link_uses.size(), b.link_uses.size());
  for (size_t i = 0; i < a.link_uses.size(); ++i) {
    EXPECT_EQ(a.link_uses[i].link, b.link_uses[i].link);
    EXPECT_EQ(a.link_uses[i].forward, b.link_uses[i].forward);
    EXPECT_EQ(bits_of(a.link_uses[i].utilisation), bits_of(b.link_uses[i].utilisation));
  }
  ASSERT_EQ(a.allreduce_bytes.size(), b.allreduce_bytes.size());
  for (size_t i = 0; i < a.allreduce_bytes.size(); ++i) {
    ASSERT_EQ(a.allreduce_bytes[i].size(), b.allreduce_bytes[i].size());
    for (size_t j = 0; j < a.allreduce_bytes[i].size(); ++j) {
      EXPECT_EQ(bits_of(a.allreduce_bytes[i][j]), bits_of(b.allreduce_bytes[i][j]));
    }
  }
  EXPECT_EQ(a.activities, b.activities);
  EXPECT_EQ(a.timeline.title, b.timeline.title);
  ASSERT_EQ(a.timeline.events.size(), b.timeline.events.size());
  for (size_t i = 0; i < a.timeline.events.size(); ++i) {
    expect_same(a.timeline.events[i], b.timeline.events[i]);
  }
}

TEST(ResultRowCodec, ARowComesBackEqualEveryDoubleBitForBit) {
  const ResultRow row = every_field_set();
  expect_same(decode_result<ResultRow>(encode_result(row)), row);
}

TEST(ResultRowCodec, ADefaultRowComesBackEqual) {
  const ResultRow row;
  expect_same(decode_result<ResultRow>(encode_result(row)), row);
}

TEST(ResultRowCodec, ARowWithAFieldMissingDoesNotDecode) {
  nlohmann::json j = every_field_set();
  j.erase("gpu_memory_gb");
  EXPECT_THROW(j.get<ResultRow>(), nlohmann::json::out_of_range);
}

TEST(ResultRowCodec, ARowCrossesAProcessEqual) {
  const ResultRow row = every_field_set();
  expect_same(run_isolated_as([&] { return row; }), row);
}

}  // namespace
}  // namespace gpuscale::sim
