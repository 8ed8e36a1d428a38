// `run --input-pipeline dali` as a user runs it: the CPU left the Huffman decode, the GPU the
// rest of it, and the pipeline's buffers in the GPU's memory, each against its closed form
// (docs/gpu-input-pipeline-sources.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "sim/compute/decode_kernels.hpp"
#include "sim/compute/gpu_spec.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

using testing::run_command;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

// workloads/datasets/imagenet.yaml's gpu_decode: the host's Huffman decode per image on the
// DGX-1's Xeon E5-2698 v4 (the clock the figure is stated for), an image's pixels and
// coefficients; a 3x224x224 sample.
constexpr double kHuffmanS = 1.49e-3;
constexpr compute::StoredImage kImage{188600, 1146e3};
constexpr double kSample = 3 * 224 * 224;

nlohmann::json rows_of(const std::string& args) {
  const auto r = run_command(kGpuscale + " run --format json " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? nlohmann::json::parse(r.out)["results"] : nlohmann::json::array();
}

// The row of a run of one configuration.
nlohmann::json row_of(const std::string& args) {
  const auto rows = rows_of(args);
  EXPECT_EQ(rows.size(), 1u) << args;
  return rows.size() == 1 ? rows[0] : nlohmann::json::object();
}

// LeNet's GPU work is tiny, so the host binds. Decoding on the GPU, an iteration takes one GPU's
// batch of Huffman decodes on its pipeline's threads (MXNet's example: 2 per GPU), whatever the
// GPU count: each GPU has its own pipeline. MXNet's own pipeline decodes all 8 GPUs' batches on
// the process's 4 threads (kvstore: one process).
TEST(CliInputPipeline, DaliLeavesTheHostTheHuffmanDecodeOnEachGpusThreads) {
  const auto dali = rows_of("--workload lenet --gpus 1,8 --batch 64 --comm nccl "
                            "--input-pipeline dali");
  ASSERT_EQ(dali.size(), 2u);
  for (const auto& row : dali) {
    EXPECT_EQ(row["input_pipeline"], "dali");
    EXPECT_EQ(row["decode_threads"], 2);
    EXPECT_NEAR(row["iteration_s"].get<double>(), 64 * kHuffmanS / 2, 0.02 * 64 * kHuffmanS / 2)
        << row.dump();
  }
  const auto cpu = row_of("--workload lenet --gpus 8 --batch 64 --comm p2p");
  EXPECT_EQ(cpu["input_pipeline"], "cpu");
  EXPECT_NEAR(cpu["iteration_s"].get<double>(), 8 * 64 * 9.26e-3 / 4, 0.02 * 8 * 64 * 9.26e-3 / 4);
}

// Decoding on the GPU adds each decode thread's nvJPEG buffer (MXNet's example: 16 MiB) and two
// prefetched batches of decoded images and 8-bit and float32 samples to each GPU's memory.
TEST(CliInputPipeline, DaliBuffersCountInEachGpusMemory) {
  const std::string run = "--workload lenet --gpus 1 --batch 64 --comm nccl";
  const auto cpu = row_of(run);
  const auto dali = row_of(run + " --input-pipeline dali");
  const double buffers = 2 * 16.0 * 1024 * 1024 + 2 * 64 * (3 * kImage.pixels + 5 * kSample);
  EXPECT_NEAR(dali["memory_gpu0_gb"].get<double>() - cpu["memory_gpu0_gb"].get<double>(),
              buffers / 1e9, 1e-9);
}

// With the host far ahead (64 threads), the decode kernels run one batch ahead, sharing the GPU
// with the training kernels: a GPU-bound iteration grows by their time, and never by more.
TEST(CliInputPipeline, TheGpusDecodeKernelsShareItWithTraining) {
  const std::string run = "--workload resnet-50 --framework pytorch-ddp --gpus 1 --batch 64 "
                          "--comm nccl --input-pipeline dali --decode-threads 64";
  const auto dali = row_of(run);
  const auto none = row_of(run + " --without input");
  const double decode_s =
      compute::gpu_decode_time(compute::load_gpu_spec("V100-SXM2"),
                               compute::load_analytic_params(compute::shipped_analytic_params_path()),
                               kImage, kSample, 64)
          .value;
  const double grown = dali["iteration_s"].get<double>() - none["iteration_s"].get<double>();
  EXPECT_GT(grown, 0.5 * decode_s);
  EXPECT_LE(grown, decode_s * (1 + 1e-9));
}

// DALI on a model whose dataset is not images: nothing to decode, no buffers, the plain run.
TEST(CliInputPipeline, ADatasetWithNothingToDecodeRunsAsWithoutIt) {
  const std::string run = "--workload lenet-5 --framework mxnet --gpus 1 --batch 64 --comm nccl";
  const auto cpu = row_of(run);
  const auto dali = row_of(run + " --input-pipeline dali --decode-threads 4");
  EXPECT_EQ(dali["iteration_s"], cpu["iteration_s"]);
  EXPECT_EQ(dali["memory_gpu0_gb"], cpu["memory_gpu0_gb"]);
}

}  // namespace
}  // namespace gpuscale
