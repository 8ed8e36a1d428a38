#include "tests/validation/tiny_suite.hpp"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/test_support.hpp"

namespace gpuscale::validation::testing {

std::map<std::string, std::string> tiny_suite_files() {
  return {{"suite.yaml",
           "name: tiny\n"
           "title: \"a tiny suite\"\n"
           "setup:\n"
           "  topology: dgx1-v100\n"
           "  framework: mxnet\n"
           "  gpus: [1, 2, 4, 8]\n"
           "  batches: [16, 32]\n"
           "  batch_per: gpu\n"
           "  epochs: 1\n"
           "  dataset: imagenet\n"
           "  strong_images: 256000\n"
           "  weak_images_per_gpu: 256000\n"
           "  precision: fp32\n"
           "  gpu_memory: 16 GB\n"
           "methods: {P2P: p2p, NCCL: nccl_reduce_bcast}\n"
           "networks: {LeNet: lenet, ResNet: resnet-50}\n"
           "tables: [speedup.yaml]\n"
           "claims: claims.yaml\n"},
          {"speedup.yaml",
           "id: speedup\n"
           "title: \"speedup over 1 GPU\"\n"
           "metric: speedup\n"
           "points:\n"
           "  - {network: LeNet, method: P2P, gpus: 2, batch: 16, scaling: strong, measured: 1.5}\n"
           "  - {network: LeNet, method: P2P, gpus: 4, batch: 16, scaling: strong, measured: 2.0, "
           "suspect: true}\n"
           "bounds:\n"
           "  - {network: ResNet, method: NCCL, gpus: 8, batch: 16, scaling: strong, below: 4}\n"},
          {"claims.yaml",
           "claims:\n"
           "  - id: p2p-faster\n"
           "    kind: faster\n"
           "    text: t\n"
           "    params: {faster: P2P, slower: NCCL, networks: [LeNet], gpus: [2, 8], batch: 16, "
           "quantity: epoch_time, margin_pct: 1}\n"
           "  - id: nccl-better-speedup\n"
           "    kind: faster\n"
           "    text: t\n"
           "    params: {faster: NCCL, slower: P2P, networks: [ResNet], gpus: [8], batch: 16, "
           "quantity: speedup}\n"
           "  - id: similar\n"
           "    kind: similar_speedup\n"
           "    text: t\n"
           "    params: {network: ResNet, like: LeNet, methods: [P2P], gpus: [2, 8], batch: 16, "
           "within_pct: 10}\n"
           "  - id: linear-in-batch\n"
           "    kind: batch_linear\n"
           "    text: t\n"
           "    params: {networks: [LeNet], methods: [P2P], gpus: [1, 8], batches: [16, 32], "
           "within_pct: 5}\n"
           "  - id: linear-in-batch-no-tolerance\n"
           "    kind: batch_linear\n"
           "    text: t\n"
           "    params: {networks: [LeNet], methods: [P2P], gpus: [8], batches: [16, 32], "
           "within_pct: null}\n"
           "  - id: wu-falls-with-batch\n"
           "    kind: wu_scaling\n"
           "    text: t\n"
           "    params: {over: batch, networks: [LeNet], methods: [P2P, NCCL], gpus: [2, 8], "
           "batches: [16, 32], decreasing: true, within_pct: null}\n"
           "  - id: wu-linear\n"
           "    kind: wu_scaling\n"
           "    text: t\n"
           "    params: {over: gpus, networks: [LeNet], methods: [P2P], gpus: [2, 4, 8], batch: "
           "16, within_pct: 20}\n"
           "  - id: wu-better\n"
           "    kind: wu_scaling\n"
           "    text: t\n"
           "    params: {over: gpus, networks: [ResNet], better_than: [LeNet], methods: [NCCL], "
           "from_gpus: 2, to_gpus: [8], batch: 16}\n"
           "  - id: fpbp-superlinear\n"
           "    kind: fpbp_scaling\n"
           "    text: t\n"
           "    params: {networks: [LeNet], methods: [P2P], from_gpus: 1, to_gpus: 2, at_least: "
           "2.0, strict: true, batch: 16}\n"
           "  - id: fpbp-near-linear\n"
           "    kind: fpbp_scaling\n"
           "    text: t\n"
           "    params: {networks: [ResNet], methods: [NCCL], from_gpus: 1, to_gpus: [2, 8], "
           "at_least: {2: 1.6, 8: 6.4}, batch: 16}\n"
           "  - id: fpbp-sublinear\n"
           "    kind: fpbp_scaling\n"
           "    text: t\n"
           "    params: {networks: [LeNet], methods: [P2P], steps: [[2, 4], [4, 8]], at_most: 2.0, "
           "strict: true, batch: 16}\n"
           "  - id: memory-within\n"
           "    kind: memory_methods_within\n"
           "    text: t\n"
           "    params: {networks: [LeNet], batches: [16], gpus: 8, columns: [pretrain, gpu0, "
           "gpux], within_pct: 5}\n"
           "  - id: gpu0-more\n"
           "    kind: gpu0_more_memory\n"
           "    text: t\n"
           "    params: {networks: [LeNet], batches: [16, 32], methods: [P2P, NCCL], gpus: 8}\n"
           "  - id: max-batch\n"
           "    kind: max_batch\n"
           "    text: t\n"
           "    params: {network: ResNet, largest_trainable_batch: 64, first_failing_batch: 128, "
           "gpu_memory: 16 GB, method: NCCL, gpus: 8}\n"
           "  - id: weak-vs-strong\n"
           "    kind: weak_vs_strong\n"
           "    text: t\n"
           "    params: {networks: [LeNet, ResNet], methods: [P2P], batches: [16, 32], gpus: [2, "
           "8], at_most_pct: 12, at_least_pct: 0}\n"
           "  - id: unchecked\n"
           "    kind: not_checked\n"
           "    text: t\n"
           "    params: {anything: [goes, here]}\n"
           "    why_not_checked: \"Fits no kind. Kept for the record.\"\n"
           "  - id: sublinear\n"
           "    kind: sublinear_speedup\n"
           "    text: t\n"
           "    params: {networks: [LeNet, ResNet], methods: [P2P], gpus: [2, 8], batches: [16, "
           "32]}\n"
           "  - id: scales-better\n"
           "    kind: better_speedup\n"
           "    text: t\n"
           "    params: {networks: [ResNet], better_than: [LeNet], methods: [NCCL], gpus: [2, 8], "
           "batch: 16, margin_pct: 1}\n"}};
}

std::string write_suite(const std::map<std::string, std::string>& files) {
  // Inside the build tree, one folder per call, so that tests leave nothing behind elsewhere.
  static int calls = 0;
  const auto dir = std::filesystem::path(GPUSCALE_TEST_TMPDIR) /
                   (std::to_string(::getpid()) + "-suite-" + std::to_string(++calls));
  std::filesystem::create_directories(dir);
  for (const auto& [name, text] : files) std::ofstream(dir / name) << text;
  return dir.string();
}

std::string load_error_at(const std::string& dir, const std::string& file, int line) {
  const std::string message = gpuscale::testing::config_error_of([&] { load_suite(dir); });
  EXPECT_THAT(message, ::testing::StartsWith(dir + "/" + file + ":" + std::to_string(line) + ": "))
      << message;
  EXPECT_THAT(message, ::testing::Not(::testing::HasSubstr("\n")));
  return message;
}

Metrics metrics_of(const Suite& suite, const RunModel& run, int largest_batch) {
  Predictions predictions;
  std::vector<std::string> methods;
  for (const NameMapping& m : suite.methods) methods.push_back(m.study);
  for (const NameMapping& n : suite.networks) {
    for (const std::string& method : methods) {
      for (int g : suite.setup.gpus) {
        for (int b : suite.setup.batches) {
          const RunKey key{n.study, method, g, b};
          predictions.runs[key] = run(key);
        }
        predictions.largest_batches[{n.study, method, g, 16e9}] = largest_batch;
      }
    }
    predictions.strong_images[n.study] = suite.setup.strong_images;
  }
  return Metrics(suite, predictions);
}

PredictedRun ideal_run(const RunKey&) { return {0.011, 0, 0.010, 0.001, 1.0, 3.0, 2.0, 1, {}}; }

}  // namespace gpuscale::validation::testing
