// Spatial parallelism's plan against closed forms (workloads/src/spatial_partition.hpp): the
// squarest grid, the block each GPU holds, the halo of a window (p rows before, k - s - p after in
// forward; ceil((k - 1 - p) / s) and ceil(p / s) gradient rows in backward-data), the classic
// "a halo is the perimeter of the cuts" total, and the group sums of batch norm and global pools.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_support.hpp"
#include "workloads/src/spatial_partition.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::wl {
namespace {

Workload model(const std::string& layers, int channels = 8, int size = 64) {
  return load_workload(testing::write_temp_file(
      "spatial.yaml", "name: t\ndataset: synthetic\ninput: {channels: " + std::to_string(channels) +
                          ", height: " + std::to_string(size) + ", width: " +
                          std::to_string(size) + "}\nlayers:\n" + layers));
}

double received_from(const SpatialPass& pass, int d_row, int d_col) {
  double elements = 0;
  for (const HaloTransfer& h : pass.receives) {
    if (h.d_row == d_row && h.d_col == d_col) elements += h.elements_per_sample + h.elements_fixed;
  }
  return elements;
}

double received(const SpatialPass& pass) {
  double elements = 0;
  for (const HaloTransfer& h : pass.receives) elements += h.elements_per_sample + h.elements_fixed;
  return elements;
}

TEST(SpatialPartition, TheSquarestGridOfTheWays) {
  const auto grid = [](int ways) {
    const SpatialSplit s = spatial_split(ways);
    return std::to_string(s.rows) + "x" + std::to_string(s.cols);
  };
  EXPECT_EQ(grid(1), "1x1");
  EXPECT_EQ(grid(2), "2x1");
  EXPECT_EQ(grid(4), "2x2");
  EXPECT_EQ(grid(6), "3x2");
  EXPECT_EQ(grid(8), "4x2");
  EXPECT_EQ(grid(16), "4x4");
  EXPECT_THROW(spatial_split(0), ConfigError);
}

TEST(SpatialPartition, EachGpuHoldsOneBlockOfEveryLayerAndTheWholeVectors) {
  const Workload whole = model("  - conv: {filters: 16, kernel: 3, pad: 1}\n"
                               "  - conv: {filters: 16, kernel: 3, stride: 2, pad: 1}\n"
                               "  - pool: {kind: avg, global: true}\n"
                               "  - fc: {outputs: 10}\n");
  const Workload shard = spatial_shard(whole, spatial_split(4));
  ASSERT_EQ(shard.layers.size(), whole.layers.size());
  EXPECT_EQ(shard.layers[0].output, (Shape{8, 32, 32}));
  EXPECT_EQ(shard.layers[1].input, (Shape{8, 32, 32}));
  EXPECT_EQ(shard.layers[1].output, (Shape{16, 32, 32}));
  EXPECT_EQ(shard.layers[2].output, (Shape{16, 16, 16}));
  EXPECT_EQ(shard.layers[3].output, (Shape{16, 1, 1}));  // the group sums the partial pools
  EXPECT_EQ(shard.layers[4].output, (Shape{10, 1, 1}));
  // Odd sizes: the largest block, the slowest GPU's.
  EXPECT_EQ(spatial_shard(model("  - relu\n", 3, 33), spatial_split(2)).layers[1].output,
            (Shape{3, 17, 33}));
}

TEST(SpatialPartition, AFullyConnectedLayerOnASpatialInputCannotBeSplit) {
  const Workload whole = model("  - conv: {filters: 4, kernel: 3}\n  - fc: {name: head, outputs: 10}\n");
  EXPECT_NO_THROW(spatial_shard(whole, spatial_split(1)));
  try {
    spatial_shard(whole, spatial_split(4));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("spatial.yaml:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'head'"), std::string::npos) << e.what();
  }
}

TEST(SpatialPartition, AThreeByThreeHaloIsOneRowAndOneColumnFromEachNeighbour) {
  const Workload whole = model("  - conv: {filters: 16, kernel: 3, pad: 1}\n"
                               "  - conv: {filters: 32, kernel: 3, pad: 1}\n");
  const SpatialSplit split = spatial_split(4);
  const Workload shard = spatial_shard(whole, split);
  const std::vector<SpatialLayer> top_left = spatial_exchanges(whole, shard, split, 0, 0);
  // conv2 reads conv1's 16 x 32 x 32 block: one row from below, one column from the right, one
  // element per channel from the diagonal neighbour.
  const SpatialPass& fwd = top_left[2].forward;
  EXPECT_DOUBLE_EQ(received_from(fwd, 1, 0), 16.0 * 32);
  EXPECT_DOUBLE_EQ(received_from(fwd, 0, 1), 16.0 * 32);
  EXPECT_DOUBLE_EQ(received_from(fwd, 1, 1), 16.0);
  EXPECT_DOUBLE_EQ(received(fwd), 16.0 * (32 + 32 + 1));
  EXPECT_DOUBLE_EQ(fwd.interior_fraction, (31.0 / 32) * (31.0 / 32));
  EXPECT_FALSE(fwd.group_reduction);
  // Backward-data carries conv2's output gradient (32 channels) the same way.
  EXPECT_DOUBLE_EQ(received(top_left[2].backward_data), 32.0 * (32 + 32 + 1));
  // Other layers exchange nothing; a 1-way split nothing at all.
  EXPECT_TRUE(top_left[0].forward.receives.empty());
  EXPECT_TRUE(spatial_exchanges(whole, whole, spatial_split(1), 0, 0)[2].forward.receives.empty());
}

TEST(SpatialPartition, TheGroupsHaloIsThePerimeterOfTheCuts) {
  // 3x3, stride 1, padding 1 on C x H x W over a 2x2 grid: each cut gives its two sides one
  // row (or column) of the other's block, and the four corners one element per channel:
  // C (2W + 2H + 4) in all, forward.
  const long c = 8, h = 64, w = 64;
  const Workload whole = model("  - conv: {filters: 4, kernel: 3, pad: 1}\n", static_cast<int>(c),
                               static_cast<int>(h));
  const SpatialSplit split = spatial_split(4);
  const Workload shard = spatial_shard(whole, split);
  double total = 0;
  for (int row = 0; row < 2; ++row) {
    for (int col = 0; col < 2; ++col) total += received(spatial_exchanges(whole, shard, split, row, col)[1].forward);
  }
  EXPECT_DOUBLE_EQ(total, static_cast<double>(c * (2 * w + 2 * h + 4)));
}

TEST(SpatialPartition, AStridedWindowReachesPaddingBeforeAndKernelLessStrideLessPaddingAfter) {
  // 7x7, stride 2, padding 3 (ResNet's first convolution) split in two rows: the upper block
  // needs k - s - p = 2 input rows from below in forward; the lower one p = 3 from above.
  // Backward-data: the upper needs ceil(p / s) = 2 gradient rows from below, the lower
  // ceil((k - 1 - p) / s) = 2 from above.
  const Workload whole = model("  - conv: {filters: 4, kernel: 7, stride: 2, pad: 3}\n", 3, 64);
  const SpatialSplit split = spatial_split(2);
  const Workload shard = spatial_shard(whole, split);
  const std::vector<SpatialLayer> upper = spatial_exchanges(whole, shard, split, 0, 0);
  const std::vector<SpatialLayer> lower = spatial_exchanges(whole, shard, split, 1, 0);
  EXPECT_DOUBLE_EQ(received_from(upper[1].forward, 1, 0), 2.0 * 64 * 3);
  EXPECT_DOUBLE_EQ(received_from(lower[1].forward, -1, 0), 3.0 * 64 * 3);
  EXPECT_DOUBLE_EQ(received_from(upper[1].backward_data, 1, 0), 2.0 * 32 * 4);
  EXPECT_DOUBLE_EQ(received_from(lower[1].backward_data, -1, 0), 2.0 * 32 * 4);
  // The upper block's last ceil(2 / 2) = 1 of its 16 output rows wait for the halo.
  EXPECT_DOUBLE_EQ(upper[1].forward.interior_fraction, 15.0 / 16);
}

// Each member keeps the halos its convolutions received in forward (their backward-weights read
// the input block again, halo included), not the group's sums: on a 2x2 grid of 64x64 samples a
// 3x3 convolution of C channels brings C (32 + 32 + 1) to every member.
TEST(SpatialPartition, AMemberKeepsItsForwardHalosButNotTheGroupSums) {
  const Workload whole = model("  - conv: {filters: 16, kernel: 3, pad: 1}\n"
                               "  - conv: {filters: 32, kernel: 3, pad: 1}\n"
                               "  - batchnorm\n"
                               "  - pool: {kind: avg, global: true}\n");
  const SpatialSplit split = spatial_split(4);
  const Workload shard = spatial_shard(whole, split);
  std::vector<std::vector<SpatialLayer>> members;
  for (int m = 0; m < 4; ++m) {
    members.push_back(spatial_exchanges(whole, shard, split, m / 2, m % 2));
  }
  EXPECT_DOUBLE_EQ(kept_halo_elements_per_sample(members), (8.0 + 16.0) * (32 + 32 + 1));
  const std::vector<SpatialLayer> alone = spatial_exchanges(whole, whole, spatial_split(1), 0, 0);
  EXPECT_DOUBLE_EQ(kept_halo_elements_per_sample({alone}), 0);
}

TEST(SpatialPartition, BatchNormAndGlobalPoolsSumOverTheGroup) {
  const Workload whole = model("  - conv: {filters: 16, kernel: 1}\n"
                               "  - batchnorm\n"
                               "  - pool: {kind: avg, global: true}\n");
  const SpatialSplit split = spatial_split(4);
  const Workload shard = spatial_shard(whole, split);
  const std::vector<SpatialLayer> plan = spatial_exchanges(whole, shard, split, 1, 0);
  EXPECT_TRUE(plan[1].forward.receives.empty());  // a 1x1 window reaches no neighbour
  // Batch norm: two per-channel sums from each of the 3 others, whatever the batch, both passes.
  const SpatialPass& bn = plan[2].forward;
  EXPECT_TRUE(bn.group_reduction);
  ASSERT_EQ(bn.receives.size(), 3u);
  for (const HaloTransfer& t : bn.receives) {
    EXPECT_DOUBLE_EQ(t.elements_fixed, 2.0 * 16);
    EXPECT_DOUBLE_EQ(t.elements_per_sample, 0);
  }
  EXPECT_DOUBLE_EQ(received(plan[2].backward_data), 3 * 2.0 * 16);
  // The global pool: each other member's partial sums, per sample, once its own are done.
  EXPECT_DOUBLE_EQ(received(plan[3].forward), 3 * 16.0);
  EXPECT_DOUBLE_EQ(plan[3].forward.interior_fraction, 1.0);
  EXPECT_TRUE(plan[3].backward_data.receives.empty());
}

}  // namespace
}  // namespace gpuscale::wl
