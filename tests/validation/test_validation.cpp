// The comparison of a suite with predictions: error and MAPE arithmetic (suspect points and
// bounds left out), the SVG figures, and `gpuscale validate` on the shipped DGX-1 study as a
// regression guard: each table's MAPE stays under its documented bound and the JSON is the same
// bytes on every run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"
#include "tests/validation/tiny_suite.hpp"
#include "validation/src/comparison.hpp"
#include "validation/src/svg_plots.hpp"

namespace gpuscale::validation {
namespace {

using gpuscale::testing::run_command;
using ::testing::HasSubstr;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

PointResult result(double error, bool suspect = false) {
  PointResult r;
  r.point.suspect = suspect;
  r.error_pct = error;
  return r;
}

TEST(Comparison, ErrorIsRelativeToTheMeasurement) {
  EXPECT_DOUBLE_EQ(error_pct(2.0, 1.5), -25);
  EXPECT_DOUBLE_EQ(error_pct(16.4, 0), -100);
  EXPECT_DOUBLE_EQ(error_pct(-2, -3), 50);
}

TEST(Comparison, MapeIsTheMeanAbsoluteErrorWithoutSuspectPoints) {
  EXPECT_DOUBLE_EQ(*mape_pct({result(-25), result(10), result(300, true)}), 17.5);
  EXPECT_FALSE(mape_pct({result(5, true)}).has_value());
  EXPECT_FALSE(mape_pct({}).has_value());
}

TEST(Comparison, AlternativeReadingPredictsTheMeanOverItsGpuCounts) {
  auto files = testing::tiny_suite_files();
  files["speedup.yaml"] += "alternatives:\n  - {id: two-and-eight, gpus: [2, 8], why: w}\n";
  const Suite suite = load_suite(testing::write_suite(files));
  ASSERT_EQ(suite.tables[0].alternatives.size(), 1u);
  const Comparison c = compare(suite, testing::metrics_of(suite, testing::ideal_run));
  ASSERT_EQ(c.alternatives.size(), 1u);
  EXPECT_EQ(c.alternatives[0].reading.id, "two-and-eight");
  // Perfect scaling: (2 + 8) / 2 = 5 against the one counted point's 1.5.
  EXPECT_NEAR(*c.alternatives[0].mape_pct, 100 * (5 - 1.5) / 1.5, 1e-9);
  EXPECT_NEAR(*c.overall_mape_pct, 100.0 / 3, 1e-12);  // the headline keeps the table's reading
}

TEST(Comparison, AlternativeReadingNeedsGpuCountsTheSetupRuns) {
  auto files = testing::tiny_suite_files();
  files["speedup.yaml"] += "alternatives:\n  - {id: three, gpus: [3], why: w}\n";
  const std::string dir = testing::write_suite(files);
  EXPECT_THAT(gpuscale::testing::config_error_of([&] { load_suite(dir); }),
              HasSubstr(dir + "/speedup.yaml:10"));
}

TEST(Comparison, ATotalBatchKeepsTheIterationsOfOneGpu) {
  auto files = testing::tiny_suite_files();
  files["suite.yaml"].replace(files["suite.yaml"].find("  epochs: 1\n"), 12,
                              "  epochs: 1\n  alternatives:\n    - {id: total, batch_per: total, "
                              "why: w}\n");
  Suite suite = load_suite(testing::write_suite(files));
  ASSERT_EQ(suite.setup.alternatives.size(), 1u);
  EXPECT_EQ(suite.setup.alternatives[0].batch_total, true);
  const RunKey eight{"LeNet", "P2P", 8, 16};
  // Every iteration takes the same time here: per GPU, 8 GPUs run 8 times fewer iterations...
  EXPECT_DOUBLE_EQ(testing::metrics_of(suite, testing::ideal_run).speedup(eight), 8);
  // ...whereas a total batch of 16 gives every GPU count 256000 / 16 iterations.
  suite.setup.batch_total = true;
  EXPECT_DOUBLE_EQ(testing::metrics_of(suite, testing::ideal_run).speedup(eight), 1);
}

TEST(Comparison, ATotalBatchMustSplitOverEveryGpuCount) {
  auto files = testing::tiny_suite_files();
  files["suite.yaml"].replace(files["suite.yaml"].find("batches: [16, 32]"), 17, "batches: [16, 30]");
  files["suite.yaml"].replace(files["suite.yaml"].find("batch_per: gpu"), 14, "batch_per: total");
  const std::string dir = testing::write_suite(files);
  EXPECT_THAT(gpuscale::testing::config_error_of([&] { load_suite(dir); }),
              HasSubstr("a total batch of 30 does not split over 4 GPUs"));
}

TEST(Comparison, TinySuiteWithPerfectScaling) {
  const Suite suite = load_suite(testing::write_suite(testing::tiny_suite_files()));
  const Comparison c = compare(suite, testing::metrics_of(suite, testing::ideal_run));
  ASSERT_EQ(c.points.size(), 2u);
  EXPECT_DOUBLE_EQ(c.points[0].predicted, 2);            // perfect scaling at 2 GPUs
  EXPECT_NEAR(c.points[0].error_pct, 100.0 / 3, 1e-12);  // against 1.5 measured
  EXPECT_NEAR(*c.tables[0].mape_pct, 100.0 / 3, 1e-12);  // the suspect point is left out
  EXPECT_EQ(c.tables[0].points_in_mape, 1);
  EXPECT_EQ(c.tables[0].suspect_points, 1);
  ASSERT_EQ(c.bounds.size(), 1u);
  EXPECT_FALSE(c.bounds[0].holds);  // 8x is not below 4x
  EXPECT_EQ(c.tables[0].bounds_holding, 0);
  EXPECT_EQ(c.overall_mape_pct, c.tables[0].mape_pct);
  EXPECT_EQ(c.claims.size(), suite.claims.size());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Starts with <svg, ends with </svg>, and every tag closes (text escapes its '<' and '>').
void expect_well_formed_svg(const std::string& path) {
  const std::string svg = read_file(path);
  EXPECT_TRUE(svg.starts_with("<svg ")) << path;
  EXPECT_TRUE(svg.ends_with("</svg>\n")) << path;
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '<'), std::count(svg.begin(), svg.end(), '>'))
      << path;
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("nan"))) << path;
}

TEST(SvgPlots, TinySuiteFigures) {
  const Suite suite = load_suite(testing::write_suite(testing::tiny_suite_files()));
  const Metrics metrics = testing::metrics_of(suite, testing::ideal_run);
  const std::string dir = testing::write_suite({}) + "/figures";
  const auto files = write_plots(suite, metrics, compare(suite, metrics), dir);
  // Speedup and breakdown per network; no memory table, so no memory figure.
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(std::filesystem::path(files[0]).filename(), "speedup-lenet.svg");
  for (const auto& f : files) expect_well_formed_svg(f);
  EXPECT_THAT(read_file(files[0]), HasSubstr("P2P measured"));
  EXPECT_THAT(read_file(dir + "/speedup-resnet.svg"), HasSubstr("NCCL bound (measured &lt;)"));
}

// Regression guards, NOT accuracy claims: each table's MAPE (%) of the shipped DGX-1 suite as
// gpuscale last predicted it, plus 2 percentage points, rounded up. A model change that makes a
// table worse past its bound fails here; one that improves it should lower the bound. The
// current values are listed in docs/validation.md. On 2026-11-29 (MXNet's residual sums in
// place): lenet-speedup 53.7, memory-pretrain 2.6, memory-gpu0 12.4, memory-gpux 13.4, overall
// 35.1, then 35.0 once batch norm reads its tensors twice and an element-wise backward reads
// what it kept (sourced traffic, applied whatever it did: ResNet's NCCL speedup at 2 GPUs went
// from 1.79 to 1.88, past its bound of 1.8); large-nets-speedup has bounds only: 13 of 18 hold,
// and kLargeNetBoundsHolding guards that count the same way, and kClaimsHolding the claims (7 of
// 26; a difference within a faster claim's margin_pct is a tie and holds neither way). nccl-overhead has no guard: the model
// predicts no overhead on one GPU, so its MAPE is 100% by construction and a bound on it could
// not fail.
const std::map<std::string, double> kMapeBoundPct = {
    {"lenet-speedup", 56}, {"memory-pretrain", 5}, {"memory-gpu0", 15},
    {"memory-gpux", 16},   {"overall", 38}};
constexpr int kLargeNetBoundsHolding = 13;
constexpr int kClaimsHolding = 7;

// The same for MXNet's one-V100 throughput table (validation/mxnet-v100): 5.1% on 2026-11-27
// (5x5 filters as F(5x5, 5x5), the host costs refitted over it).
TEST(ValidateCli, MxnetV100MapeStaysWithinItsBound) {
  const auto r = run_command(kGpuscale + " validate --suite mxnet-v100 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LE(nlohmann::json::parse(r.out)["mape_pct"]["overall"].get<double>(), 8);
}

TEST(ValidateCli, Dgx1MapeStaysWithinItsBoundsAndTheJsonIsTheSameBytes) {
  const std::string dir = testing::write_suite({}) + "/figures";
  const auto first =
      run_command(kGpuscale + " validate --suite dgx1-mxnet --format json --plot " + dir);
  ASSERT_EQ(first.status, 0) << first.err;
  const auto j = nlohmann::json::parse(first.out);
  for (const char* key : {"points", "bounds", "claims", "mape_pct"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["points"].size(), 66u);
  for (const auto& p : j["points"]) {
    for (const char* key : {"id", "measured", "predicted", "error_pct"})
      EXPECT_TRUE(p.contains(key)) << key;
  }
  for (const auto& [table, bound] : kMapeBoundPct) {
    ASSERT_TRUE(j["mape_pct"][table].is_number()) << table;
    EXPECT_LE(j["mape_pct"][table].get<double>(), bound) << table;
  }
  EXPECT_TRUE(j["mape_pct"]["large-nets-speedup"].is_null());
  int holding = 0;
  for (const auto& b : j["bounds"]) holding += b["holds"].get<bool>();
  EXPECT_GE(holding, kLargeNetBoundsHolding);
  int claims_holding = 0;
  for (const auto& c : j["claims"]) {
    ASSERT_TRUE(c.contains("holds")) << c["id"];
    claims_holding += c["holds"].is_boolean() && c["holds"].get<bool>();
  }
  EXPECT_GE(claims_holding, kClaimsHolding);
  // Each reading of the setup says what it changes and how its bounds and claims fare.
  ASSERT_EQ(j["setup_readings"].size(), 3u);
  EXPECT_EQ(j["setup_readings"][0]["batch_per"], "total");
  EXPECT_EQ(j["setup_readings"][1]["decode_threads"], 39);
  EXPECT_EQ(j["setup_readings"][2]["networks"]["GoogLeNet"], "googlenet-299");
  for (const auto& reading : j["setup_readings"]) {
    EXPECT_LE(reading["claims_holding"].get<int>(), static_cast<int>(j["claims"].size()));
    EXPECT_EQ(reading["claims_that_hold"].size(), reading["claims_holding"].get<size_t>());
    EXPECT_LE(reading["bounds_holding"].get<int>(), reading["bounds"].get<int>());
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    expect_well_formed_svg(entry.path().string());

  const auto second = run_command(kGpuscale + " validate --suite dgx1-mxnet --format json");
  EXPECT_EQ(second.out, first.out);  // same input, same bytes
}

// The same for the Megatron-LM suite on Selene (validation/megatron-a100, a `kind: train` suite:
// every point held out, nothing fitted). On 2026-11-28: narayanan-table1 4.5% over 9 points,
// readme-mfu 6.3% over 3, overall 4.9%; the bounds are those plus 2 points, rounded up. Two rows
// (the 1T model) are transcribed but not simulated: their fc1 exceeds a cuDNN tensor.
const std::map<std::string, double> kMegatronMapeBoundPct = {
    {"narayanan-table1", 7}, {"readme-mfu", 9}, {"overall", 7}};

TEST(ValidateCli, MegatronA100MapeStaysWithinItsBoundsAndTheJsonIsTheSameBytes) {
  const std::string command = kGpuscale + " validate --suite megatron-a100 --format json";
  const auto first = run_command(command);
  ASSERT_EQ(first.status, 0) << first.err;
  const auto j = nlohmann::json::parse(first.out);
  EXPECT_EQ(j["calibration_points"], 0);
  ASSERT_EQ(j["points"].size(), 14u);
  int simulated = 0;
  for (const auto& p : j["points"]) {
    EXPECT_TRUE(p["held_out"].get<bool>()) << p["id"];
    if (p["predicted"].is_null()) {
      EXPECT_TRUE(p.contains("not_simulated")) << p["id"];
      continue;
    }
    ++simulated;
    EXPECT_GT(p["predicted"].get<double>(), 0) << p["id"];
    EXPECT_TRUE(p["fits"].get<bool>()) << p["id"];  // every row ran on 80 GB GPUs
  }
  EXPECT_EQ(simulated, 12);
  for (const auto& [table, bound] : kMegatronMapeBoundPct) {
    ASSERT_TRUE(j["mape_pct"][table].is_number()) << table;
    EXPECT_LE(j["mape_pct"][table].get<double>(), bound) << table;
  }
  EXPECT_EQ(run_command(command).out, first.out);  // same input, same bytes
}

// The same for the Megatron-Core H100 table (validation/megatron-h100): 23.7% over 7 points on
// 2026-11-29, every one under-predicted (30.3% at first look; 13.4% with fused attention and
// NCCL's own algorithm choice; then three sourced changes, each applied whatever it did: 21.1%
// once the table's BF16 runs exchange the FP32 gradients Megatron-LM's --bf16 reduces, 22.1%
// with the H100's measured NVLink efficiency, 23.7% with cuDNN's measured fused-attention
// speed; the overlap of the exchange with compute, which the runs used, is not modelled:
// docs/validation.md); the bound is that plus 2 points, rounded up.
// Two rows are transcribed, not simulated.
TEST(ValidateCli, MegatronH100MapeStaysWithinItsBound) {
  const auto r = run_command(kGpuscale + " validate --suite megatron-h100 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["points"].size(), 9u);
  EXPECT_LE(j["mape_pct"]["overall"].get<double>(), 26);
}

// The EDSR-on-Lassen suite (validation/lassen-edsr), held out: its first look on 2026-11-29 was
// speedup 26.9%, throughput 409.0%, single-v100 151.4% (the model's EDSR runs 4x faster than the
// measured one on one V100, and scales at 98% to 512 GPUs against 64%: docs/validation.md). The
// bounds are those plus 2 points, rounded up: regression guards, not accuracy claims. Two sourced
// changes moved single-v100 since, applied whatever they did: batch norm's and element-wise
// backward traffic (153.9) and gradients summed where branches fork (154.0); its bound follows.
TEST(ValidateCli, LassenEdsrStaysWithinItsBoundsAndShowsItsFirstLook) {
  const auto r = run_command(kGpuscale + " validate --suite lassen-edsr --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["points"].size(), 59u);
  const std::map<std::string, double> bounds = {
      {"speedup", 29}, {"throughput", 412}, {"single-v100", 156}};
  for (const auto& [table, bound] : bounds) {
    EXPECT_LE(j["mape_pct"][table].get<double>(), bound) << table;
  }
  EXPECT_EQ(j["history"]["first_look"]["mape_pct"]["speedup"].get<double>(), 26.9);
  EXPECT_EQ(j["history"]["development"], false);
  // The profile's "most messages are near 64MB", checked over every GPU count MPI ran: one check
  // per count, each reading its run's allreduces.
  bool message_sizes = false;
  for (const auto& claim : j["claims"]) {
    if (claim["id"] != "most-messages-near-64mb") continue;
    message_sizes = true;
    EXPECT_EQ(claim["kind"], "message_sizes");
    EXPECT_EQ(claim["checks"].size(), 9u);
  }
  EXPECT_TRUE(message_sizes);
  // The reading in which EDSR runs under its own framework, cuDNN's heuristics instead of
  // autotuning (readings R10): one V100 at 15 img/s against 11.34, not 45 (21.1% on 2026-11-29).
  bool heuristics = false;
  for (const auto& reading : j["setup_readings"]) {
    if (reading["id"] != "edsr-heuristics") continue;
    heuristics = true;
    EXPECT_EQ(reading["frameworks"]["EDSR"], "edsr-pytorch-horovod.yaml");
    EXPECT_LE(reading["mape_pct"]["single-v100"].get<double>(), 24);
  }
  EXPECT_TRUE(heuristics);
}

// The Dell MLPerf suite (validation/dell-mlperf), held out: one study over seven servers, two
// precisions and three kinds of table. Its first look on 2026-11-29 (fbdbbe2): resnet50-epoch
// 1030.3% (ResNet-50 MXNet bound by the CPU decode of MXNet's 4 threads where NVIDIA's run decoded
// with DALI on the GPU), nvlink-bridge 91.1%, mixed-precision 70.0%, claims 4 of 12. With NVIDIA's
// MXNet described (mxnet-nvidia-v05.yaml, its DALI pipeline): 45.5%, 91.2%, 0.2%, claims 5 of 12;
// with its model's batch norm fused (workloads/resnet-50-v1b-fl.yaml): 31.5%, 91.0%, 4.7%, claims 5
// of 12. The bounds are those plus a few points: regression guards, not accuracy claims.
TEST(ValidateCli, DellMlperfComparesServersAndPrecisionsAndShowsItsFirstLook) {
  const auto r = run_command(kGpuscale + " validate --suite dell-mlperf --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["points"].size(), 4u);
  const std::map<std::string, double> bounds = {
      {"resnet50-epoch", 35}, {"nvlink-bridge", 95}, {"mixed-precision", 8}};
  for (const auto& [table, bound] : bounds) {
    EXPECT_LE(j["mape_pct"][table].get<double>(), bound) << table;
  }
  for (const auto& point : j["points"]) {
    if (point["table"] == "nvlink-bridge") {
      EXPECT_EQ(point["machine"], "Precision-5820");
    }
  }
  EXPECT_EQ(j["history"]["first_look"]["claims"], "4 of 12");
  EXPECT_EQ(j["history"]["development"], false);
}

// A network may read its data through another pipeline than its framework's own (`input_pipeline:
// dali`, a study's --use-dali). LeNet's GPU work is tiny, so the host binds: MXNet's own pipeline
// decodes a batch of 64 on 4 threads at 9.26 ms an image, DALI's Huffman-decodes it on the GPU's
// 2 threads at 1.49 ms (workloads/datasets/imagenet.yaml, mxnet.yaml).
TEST(ValidateCli, ANetworkMayReadItsDataThroughDali) {
  const std::string dir = testing::write_suite(
      {{"suite.yaml",
        "name: dali\ntitle: t\n"
        "setup: {topology: dgx1-v100, framework: mxnet, gpus: [1], batches: [64], batch_per: gpu,\n"
        "        epochs: 1, dataset: imagenet, strong_images: 6400, weak_images_per_gpu: 6400,\n"
        "        precision: fp32, gpu_memory: 16 GB}\n"
        "methods: {P2P: p2p}\n"
        "networks: {LeNet: lenet, LeNet-DALI: {workload: lenet, input_pipeline: dali}}\n"
        "tables: [rate.yaml]\n"},
       {"rate.yaml",
        "id: rate\ntitle: t\nmetric: images_per_s\npoints:\n"
        "  - {network: LeNet, method: P2P, gpus: 1, batch: 64, scaling: strong, measured: 400}\n"
        "  - {network: LeNet-DALI, method: P2P, gpus: 1, batch: 64, scaling: strong, "
        "measured: 1300}\n"}});
  const auto r = run_command(kGpuscale + " validate --suite " + dir + " --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto points = nlohmann::json::parse(r.out)["points"];
  ASSERT_EQ(points.size(), 2u);
  EXPECT_NEAR(points[0]["predicted"].get<double>(), 4 / 9.26e-3, 0.02 * 4 / 9.26e-3);
  EXPECT_NEAR(points[1]["predicted"].get<double>(), 2 / 1.49e-3, 0.02 * 2 / 1.49e-3);
}

// PipeDream's per-layer profiles (validation/pipedream-v100, a layers suite) through the CLI:
// every model, each row's parts, the V100-PCIe reading beside the headline, and the history of a
// development suite; --without belongs to study suites. Its data lies in ../shared.
TEST(ValidateCli, PipeDreamLayersSuiteReportsEveryModelAndItsReading) {
  if (!std::filesystem::exists(GPUSCALE_SHARED_DATA_DIR "/pipedream-v100/layers.csv"))
    GTEST_SKIP() << "needs ../shared/data/pipedream-v100 beside the source tree";
  const auto r = run_command(kGpuscale + " validate --suite pipedream-v100 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["models"].size(), 5u);
  const auto& row = j["models"][2]["rows"][1];  // ResNet-50's first batch norm, forward
  EXPECT_EQ(row["pass"], "forward");
  EXPECT_NEAR(row["predicted_ms"].get<double>(),
              row["own_ms"].get<double>() + row["charged_ms"].get<double>() +
                  row["host_ms"].get<double>(),
              1e-12);
  EXPECT_EQ(j["readings"][0]["gpu"], "V100-PCIe");
  EXPECT_TRUE(j["history"]["development"].is_string());
  const auto without = run_command(kGpuscale + " validate --suite pipedream-v100 --without host");
  EXPECT_EQ(without.status, 2);
  EXPECT_THAT(without.err, HasSubstr("is a layers suite: --plot and --without apply to study "
                                     "suites only"));
}

TEST(ValidateCli, TrainSuiteRowThatDisagreesWithItsWorkloadIsAnErrorWithItsLine) {
  const std::string dir = testing::write_suite(
      {{"suite.yaml",
        "kind: train\nname: t\ntitle: t\nsetup: {topology: dgx-a100-superpod}\n"
        "tables: [t.yaml]\n"},
       {"t.yaml",
        "id: t\ntitle: t\nsource: s\nmetric: tflops_per_gpu\npoints:\n"
        "  - {id: a, workload: megatron-gpt-1.7b, tp: 1, pp: 1, dp: 8, gpus: 8, micro_batch: 1,\n"
        "     global_batch: 8, recompute: full, measured: 100, row: {hidden: 2048}}\n"}});
  const auto r = run_command(kGpuscale + " validate --suite " + dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("t.yaml:6: point 'a': the row's hidden is 2048 but workload "
                               "'megatron-gpt-1.7b' has 2304"));
}

TEST(ValidateCli, UnknownSuiteIsOneLineAndExitTwo) {
  const auto r = run_command(kGpuscale + " validate --suite nosuch");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("unknown validation suite 'nosuch'"));
}

}  // namespace
}  // namespace gpuscale::validation
