// Spatial parallelism in the replay (docs/replay.md, "Spatial parallelism"): a halo on the
// critical path costs its transfer time over the link it crosses, the interior of a block hides
// a fast one, activations per GPU shrink with the split, and the GPU counts that cannot form
// groups are refused. Every simulation runs in a child process (run_experiment does it).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/experiment/experiment.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale::sim {
namespace {

constexpr int kChannels = 16, kSize = 256, kBatch = 4;

// Two 3x3 convolutions on 16 x 256 x 256 samples: conv1's and conv2's forward and conv2's
// backward-data each need one row of 16 x 256 from the other half of a 2-way split.
std::string two_convolutions() {
  return testing::write_temp_file(
      "spatial-convs.yaml",
      "name: spatial-convs\ndataset: synthetic\ninput: {channels: 16, height: 256, width: 256}\n"
      "layers:\n  - conv: {filters: 16, kernel: 3, pad: 1}\n"
      "  - conv: {filters: 16, kernel: 3, pad: 1}\n");
}

// `gpus` GPUs, every pair joined by one link of `bandwidth` (per direction, efficiency 1).
std::string machine(int gpus, const std::string& bandwidth) {
  std::string yaml = "name: pairs\nlink_kinds:\n  nvlink: {lane_bandwidth: " + bandwidth +
                     ", latency: 1 us}\ndevices:\n";
  for (int i = 0; i < gpus; ++i) {
    yaml += "  gpu" + std::to_string(i) + ": {kind: gpu, model: V100-SXM2, memory: 16 GB}\n";
  }
  yaml += "links:\n";
  for (int i = 0; i < gpus; ++i) {
    for (int j = i + 1; j < gpus; ++j) {
      yaml += "  - {a: gpu" + std::to_string(i) + ", b: gpu" + std::to_string(j) +
              ", kind: nvlink, lanes: 1}\n";
    }
  }
  std::string name = "pairs-" + std::to_string(gpus) + "-" + bandwidth + ".yaml";
  std::replace(name.begin(), name.end(), '/', '-');
  std::replace(name.begin(), name.end(), ' ', '-');
  return testing::write_temp_file(name, yaml);
}

// `gpus` GPUs of four joined pairwise. Only the GPUs and the links: no host, engine, input or per-run cost, one allreduce per tensor.
Experiment kernels_and_links(int gpus, int spatial, const std::string& bandwidth) {
  Experiment e;
  e.topology = machine(4, bandwidth);
  e.framework = "pytorch-ddp";
  e.without = {"engine", "host", "input", "setup"};
  e.workloads = {two_convolutions()};
  e.gpus = {gpus};
  e.batches = {kBatch};
  e.comms = {"nccl"};
  e.fusion_mb = 0;
  e.spatial = spatial;
  return e;
}

ResultRow run_one(const Experiment& e) {
  const auto rows = run_experiment(e);
  EXPECT_FALSE(rows.empty());
  return rows.back();
}

TEST(SpatialReplay, AHaloOnTheCriticalPathCostsItsTransferTime) {
  // Three halo exchanges of one row each: 3 x 16 x 256 x 4 samples x 4 B = 196,608 B. Over a
  // 0.1 GB/s link they take 1.97 ms, far more than the interiors they overlap; over 1 TB/s
  // nothing. The difference of the two iterations is the slow halos less at most the kernels
  // they hid, plus at most the slower gradient allreduce (two 9.3 kB tensors, 0.2 ms).
  const double halo_s = 3.0 * kChannels * kSize * kBatch * 4 / 0.1e9;
  const ResultRow slow = run_one(kernels_and_links(2, 2, "0.1 GB/s"));
  const ResultRow fast = run_one(kernels_and_links(2, 2, "1000 GB/s"));
  const double extra_s = slow.iteration_s - fast.iteration_s;
  EXPECT_GE(extra_s, halo_s - fast.fpbp_s) << slow.iteration_s << " " << fast.iteration_s;
  EXPECT_LE(extra_s, halo_s + 0.2e-3) << slow.iteration_s << " " << fast.iteration_s;
  EXPECT_EQ(slow.spatial_ways, 2);
}

TEST(SpatialReplay, TheInteriorHidesAFastHalo) {
  // Over 2 GB/s each of the three one-row halos of a 4-way split (16 x 128 x 4 samples x 4 B =
  // 32 kB) takes 16 us, less than the interior it overlaps: the iteration is what it is over
  // 1 TB/s but for the gradients' slower allreduce (two 9.3 kB tensors, under 10 us). Were the
  // halos waited for before each pass, it would be 49 us longer.
  const ResultRow fast = run_one(kernels_and_links(4, 4, "1000 GB/s"));
  const ResultRow slower = run_one(kernels_and_links(4, 4, "2 GB/s"));
  EXPECT_LT(slower.iteration_s - fast.iteration_s, 15e-6) << slower.iteration_s << " " << fast.iteration_s;
}

TEST(SpatialReplay, EachGpuComputesItsBlockOfTheSamples) {
  // Each GPU of a 4-way split runs a quarter of the samples' pixels: its forward and backward
  // kernels take at least a quarter of one GPU's, more as a smaller block fills the GPU less
  // (the compute model's waves: 1.37 times a quarter here), never the whole.
  const ResultRow whole = run_one(kernels_and_links(1, 1, "1000 GB/s"));
  const ResultRow split = run_one(kernels_and_links(4, 4, "1000 GB/s"));
  EXPECT_GE(split.fpbp_s, whole.fpbp_s / 4 * 0.99);
  EXPECT_LE(split.fpbp_s, whole.fpbp_s / 2);
  // One iteration still trains kBatch samples: the group shares them.
  EXPECT_NEAR(split.throughput_img_s * split.iteration_s, kBatch, 1e-9);
}

TEST(SpatialReplay, ActivationsPerGpuShrinkWithTheSplit) {
  // What training adds to the memory before it (activations, workspace, buffers) is per sample
  // block; a 4-way split keeps a quarter of it on each GPU, weights whole.
  const ResultRow whole = run_one(kernels_and_links(1, 1, "1000 GB/s"));
  const ResultRow split = run_one(kernels_and_links(4, 4, "1000 GB/s"));
  const double whole_gb = whole.memory_gpu0_gb - whole.memory_before_training_gb;
  const double split_gb = split.memory_gpu0_gb - split.memory_before_training_gb;
  EXPECT_NEAR(split_gb / whole_gb, 0.25, 0.03) << whole_gb << " " << split_gb;
  EXPECT_DOUBLE_EQ(split.memory_before_training_gb, whole.memory_before_training_gb);
}

TEST(SpatialReplay, GpuCountsThatCannotFormGroupsAreRefused) {
  Experiment e = kernels_and_links(4, 4, "1000 GB/s");
  e.gpus = {1, 2, 4};
  try {
    check_gpu_counts(e);
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              "--gpus: 2 GPUs cannot form groups of 4 (spatial): use a multiple of 4");
  }
  e.gpus = {1, 4};
  EXPECT_NO_THROW(check_gpu_counts(e));  // one GPU is the baseline, holding whole samples
  e.profile = "calibration/data/any.yaml";
  EXPECT_THROW(check_gpu_counts(e), ConfigError);
}

}  // namespace
}  // namespace gpuscale::sim
