// TraceJobResult's one codec (trace_result_codec.hpp): it comes back equal, every double bit for
// bit.
#include <gtest/gtest.h>

#include "sim/engine/isolated.hpp"
#include "sim/trace/trace_result_codec.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale::sim {
namespace {

using testing::bits_of;

TEST(TraceResultCodec, AResultComesBackEqualEveryDoubleBitForBit) {
  TraceJobResult result;
  result.topology = "dgx-h200";
  result.gpu = "H200-SXM";
  result.replay = {.iteration_s = 1.0 / 3, .compute_s = 0.1, .communication_s = 2.0 / 7,
                   .exposed_communication_s = 1e-300, .kernels = 161, .collectives = 54,
                   .messages = 3, .activities = 99999999999L};
  result.wall_s = 0.25;
  const auto back = decode_result<TraceJobResult>(encode_result(result));
  EXPECT_EQ(back.topology, result.topology);
  EXPECT_EQ(back.gpu, result.gpu);
  for (const auto field : {&TraceResult::iteration_s, &TraceResult::compute_s,
                           &TraceResult::communication_s, &TraceResult::exposed_communication_s}) {
    EXPECT_EQ(bits_of(back.replay.*field), bits_of(result.replay.*field));
  }
  EXPECT_EQ(back.replay.kernels, result.replay.kernels);
  EXPECT_EQ(back.replay.collectives, result.replay.collectives);
  EXPECT_EQ(back.replay.messages, result.replay.messages);
  EXPECT_EQ(back.replay.activities, result.replay.activities);
  EXPECT_EQ(bits_of(back.wall_s), bits_of(result.wall_s));
}

}  // namespace
}  // namespace gpuscale::sim
