// CollectiveJobResult's one codec (collective_result_codec.hpp): it comes back equal, its seconds
// bit for bit.
#include <gtest/gtest.h>

#include "sim/engine/isolated.hpp"
#include "sim/experiment/collective_result_codec.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale::sim {
namespace {

using testing::bits_of;

TEST(CollectiveResultCodec, AResultComesBackEqualItsSecondsBitForBit) {
  const CollectiveJobResult result{"dgx-h100", "ring/ll128 (NCCL 2.21.5)", 1.0 / 3, 123456789012L};
  const auto back = decode_result<CollectiveJobResult>(encode_result(result));
  EXPECT_EQ(back.topology, result.topology);
  EXPECT_EQ(back.protocol, result.protocol);
  EXPECT_EQ(bits_of(back.seconds), bits_of(result.seconds));
  EXPECT_EQ(back.activities, result.activities);
}

}  // namespace
}  // namespace gpuscale::sim
