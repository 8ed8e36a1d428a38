// Loading a validation suite: the tiny suite loads whole; each mistake (an unknown key, malformed
// YAML, a name or GPU count the suite does not define, claim params that fit no form, a missing
// file) is one ConfigError naming the file and the line at fault.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/test_support.hpp"
#include "tests/validation/tiny_suite.hpp"
#include "validation/src/claims.hpp"
#include "validation/src/layers_suite.hpp"
#include "validation/src/suite.hpp"
#include "validation/src/train_suite.hpp"

namespace gpuscale::validation {
namespace {

using gpuscale::testing::config_error_of;
using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::load_error_at;
using testing::tiny_suite_files;
using testing::write_suite;

// The tiny suite with `from` replaced by `to` in `file`.
std::string suite_with(const std::string& file, const std::string& from, const std::string& to) {
  auto files = tiny_suite_files();
  const auto at = files.at(file).find(from);
  EXPECT_NE(at, std::string::npos) << from;
  files[file].replace(at, from.size(), to);
  return write_suite(files);
}

TEST(SuiteLoader, LoadsTheTinySuite) {
  const Suite s = load_suite(write_suite(tiny_suite_files()));
  EXPECT_EQ(s.name, "tiny");
  EXPECT_EQ(s.setup.batches, (std::vector<int>{16, 32}));
  EXPECT_DOUBLE_EQ(s.setup.gpu_memory.value, 16e9);
  EXPECT_EQ(s.comm_of("NCCL"), "nccl_reduce_bcast");
  EXPECT_EQ(s.workload_of("ResNet"), "resnet-50");
  ASSERT_EQ(s.tables.size(), 1u);
  ASSERT_EQ(s.tables[0].points.size(), 2u);
  EXPECT_EQ(s.tables[0].points[0].id, "speedup/LeNet/P2P/2gpu/b16");
  EXPECT_TRUE(s.tables[0].points[1].suspect);
  EXPECT_EQ(s.tables[0].bounds.at(0).below, 4);
  ASSERT_EQ(s.claims.size(), 18u);
  for (const Claim& c : s.claims) EXPECT_EQ(c.form == nullptr, c.kind == "not_checked") << c.id;
  EXPECT_EQ(s.claims[9].params.at_least_by_gpus, (std::map<int, double>{{2, 1.6}, {8, 6.4}}));
  EXPECT_FALSE(s.claims[4].params.within_pct.has_value());  // within_pct: null
}

// Every shipped suite says what it has been through: its first look, with the commit that made
// it, and whether it has been used to choose between model changes (suite_history.hpp).
TEST(SuiteHistory, EveryShippedSuiteRecordsItsFirstLook) {
  std::vector<std::string> suites;
  for (const auto& entry : std::filesystem::directory_iterator(shipped_suites().dir())) {
    if (std::filesystem::is_regular_file(entry.path() / "suite.yaml")) {
      suites.push_back(entry.path().filename().string());
    }
  }
  ASSERT_GE(suites.size(), 6u);
  for (const std::string& name : suites) {
    const SuiteKind kind = suite_kind(name);
    // A layers suite reads its profiler's data from ../shared, which CI has and a bare clone
    // lacks.
    if (kind == SuiteKind::layers && !std::filesystem::exists(GPUSCALE_SHARED_DATA_DIR)) continue;
    const SuiteHistory h = kind == SuiteKind::train    ? load_train_suite(name).history
                           : kind == SuiteKind::layers ? load_layers_suite(name).history
                                                       : load_suite(name).history;
    EXPECT_TRUE(h.recorded) << name;
    EXPECT_FALSE(h.first_look.commit.empty()) << name;
    EXPECT_TRUE(!h.first_look.mape_pct.empty() || !h.first_look.claims.empty()) << name;
  }
  EXPECT_TRUE(load_suite("dgx1-mxnet").history.development.size() > 0);
  EXPECT_TRUE(load_train_suite("megatron-a100").history.development.empty());
  EXPECT_DOUBLE_EQ(load_suite("dgx1-mxnet").history.first_look.mape_pct.at("overall"), 52.3);
}

// A first look naming a table the suite does not have, or a development flag without its story,
// is one line at that line.
TEST(SuiteHistory, AFirstLookOfAnUnknownTableIsAnErrorAtItsLine) {
  auto files = tiny_suite_files();
  files["suite.yaml"] += "history:\n  first_look: {commit: abc1234, date: 2026-11-29, "
                         "mape_pct: {speedups: 12.0}}\n  development: false\n";
  const std::string error = config_error_of([&] { load_suite(write_suite(files)); });
  EXPECT_THAT(error, HasSubstr("first_look: unknown table 'speedups' (did you mean 'speedup'?)"));
  EXPECT_THAT(error, HasSubstr("suite.yaml:"));
  // `development: true` says nothing of how the suite was used.
  auto vague = tiny_suite_files();
  vague["suite.yaml"] += "history:\n  first_look: {commit: abc1234, date: 2026-11-29, "
                         "mape_pct: {speedup: 12.0}}\n  development: true\n";
  EXPECT_THAT(config_error_of([&] { load_suite(write_suite(vague)); }),
              HasSubstr("development: say how the suite has been used"));
}

TEST(SuiteLoader, ShipsTheDgx1Study) {
  const Suite s = load_suite("dgx1-mxnet");
  EXPECT_EQ(s.tables.size(), 6u);
  EXPECT_EQ(s.comm_of("NCCL"), "nccl_reduce_bcast");
}

TEST(SuiteLoader, ShipsTheOneV100Calibration) {
  const Suite s = load_suite("mxnet-v100");
  EXPECT_TRUE(s.setup.synthetic_data);  // MXNet's --benchmark 1: no input pipeline
  EXPECT_TRUE(s.claims.empty());        // a suite may state no claims
  ASSERT_EQ(s.tables.size(), 1u);
  EXPECT_EQ(s.tables[0].metric, Metric::ImagesPerS);
  EXPECT_EQ(s.tables[0].points.size(), 23u);
}

// The spatial-parallelism study: claims only, methods that split samples, networks that ran
// with some methods and batches only.
TEST(SuiteLoader, ShipsTheLassenSpatialStudy) {
  const Suite s = load_suite("lassen-spatial");
  EXPECT_EQ(s.setup.framework, "pytorch-horovod");
  EXPECT_TRUE(s.tables.empty());
  EXPECT_EQ(s.spatial_of("Spatial"), 4);
  EXPECT_EQ(s.spatial_of("Sample"), 1);
  EXPECT_EQ(s.methods_of("Mesh"), (std::vector<std::string>{"Sample", "Spatial"}));
  EXPECT_EQ(s.batches_of("ResNet-50"), (std::vector<int>{32}));
  EXPECT_EQ(s.comm_of("Sample"), "aluminum");  // LBANN's default allreduce (suite.yaml)
  EXPECT_EQ(s.setup.fusion_mb, 0.0);            // "performed on a per-buffer basis"
  ASSERT_EQ(s.setup.alternatives.size(), 3u);
  EXPECT_NEAR(s.setup.alternatives[0].fusion_mb.value_or(0), 67.108864, 1e-9);  // Horovod's
  EXPECT_EQ(s.setup.alternatives[1].methods.at("Sample"), "nccl");  // the earlier reading
  EXPECT_EQ(s.setup.alternatives[2].synthetic_data, false);
  ASSERT_EQ(s.claims.size(), 8u);
  for (const Claim& c : s.claims) {
    EXPECT_FALSE(c.text.empty()) << c.id;
    EXPECT_EQ(c.form == nullptr, c.kind == "not_checked") << c.id;
  }
}

TEST(SuiteLoader, DataIsADatasetOrSynthetic) {
  EXPECT_FALSE(load_suite(write_suite(tiny_suite_files())).setup.synthetic_data);
  EXPECT_THAT(load_error_at(suite_with("suite.yaml", "  epochs: 1\n", "  epochs: 1\n  data: jpeg\n"),
                       "suite.yaml", 10),
              HasSubstr("synthetic"));
}

// A reading of the setup changes the batches, the decode threads, the networks' workloads or
// several of them, and nothing else.
TEST(SuiteLoader, SetupReadingsChangeTheBatchesOrTheDecodeThreads) {
  const std::string readings = "  epochs: 1\n  decode_threads: 4\n  alternatives:\n"
                               "    - {id: threads, decode_threads: 39, why: w}\n"
                               "    - {id: both, batch_per: total, decode_threads: 8, why: w}\n";
  const Suite s = load_suite(suite_with("suite.yaml", "  epochs: 1\n", readings));
  EXPECT_EQ(s.setup.decode_threads, 4);
  ASSERT_EQ(s.setup.alternatives.size(), 2u);
  const validation::Setup threads = s.setup.read_as(s.setup.alternatives[0]);
  EXPECT_EQ(threads.decode_threads, 39);
  EXPECT_FALSE(threads.batch_total);
  const validation::Setup both = s.setup.read_as(s.setup.alternatives[1]);
  EXPECT_EQ(both.decode_threads, 8);
  EXPECT_TRUE(both.batch_total);
  EXPECT_THAT(load_error_at(suite_with("suite.yaml", "  epochs: 1\n",
                                  "  epochs: 1\n  alternatives:\n    - {id: none, why: w}\n"),
                       "suite.yaml", 11),
              HasSubstr("must change batch_per, decode_threads, fusion_mb, data, networks, "
                        "methods or frameworks"));
}

// The allreduce buffer is read like the decode threads: in the setup, and changed by a reading,
// 0 (one allreduce per tensor) and fractions of a MB included.
TEST(SuiteLoader, SetupReadingsMayChangeTheFusionBuffer) {
  const std::string readings = "  epochs: 1\n  fusion_mb: 64\n  alternatives:\n"
                               "    - {id: per-tensor, fusion_mb: 0, why: w}\n"
                               "    - {id: half, fusion_mb: 0.5, decode_threads: 8, why: w}\n";
  const Suite s = load_suite(suite_with("suite.yaml", "  epochs: 1\n", readings));
  EXPECT_EQ(s.setup.fusion_mb, 64);
  ASSERT_EQ(s.setup.alternatives.size(), 2u);
  const validation::Setup per_tensor = s.setup.read_as(s.setup.alternatives[0]);
  EXPECT_EQ(per_tensor.fusion_mb, 0);
  EXPECT_FALSE(per_tensor.decode_threads);
  const validation::Setup half = s.setup.read_as(s.setup.alternatives[1]);
  EXPECT_EQ(half.fusion_mb, 0.5);
  EXPECT_EQ(half.decode_threads, 8);
  EXPECT_FALSE(load_suite(write_suite(tiny_suite_files())).setup.fusion_mb);
}

TEST(SuiteLoader, FusionBufferIsNotNegative) {
  EXPECT_THAT(load_error_at(suite_with("suite.yaml", "  epochs: 1\n", "  epochs: 1\n  fusion_mb: -1\n"),
                       "suite.yaml", 10),
              AllOf(HasSubstr("fusion_mb"), HasSubstr("outside 0..")));
  const std::string reading = "  epochs: 1\n  alternatives:\n"
                              "    - {id: bad, fusion_mb: -0.5, why: w}\n";
  EXPECT_THAT(load_error_at(suite_with("suite.yaml", "  epochs: 1\n", reading), "suite.yaml", 11),
              HasSubstr("fusion_mb"));
}

TEST(SuiteLoader, SetupReadingsMayMapANetworkToAnotherWorkload) {
  const std::string reading = "  epochs: 1\n  alternatives:\n"
                              "    - {id: deeper, networks: {ResNet: resnet-101}, why: w}\n";
  const Suite s = load_suite(suite_with("suite.yaml", "  epochs: 1\n", reading));
  const Suite deeper = s.read_as(s.setup.alternatives.at(0));
  EXPECT_EQ(deeper.workload_of("ResNet"), "resnet-101");
  EXPECT_EQ(deeper.workload_of("LeNet"), "lenet");  // the networks it does not name stay
  EXPECT_EQ(s.workload_of("ResNet"), "resnet-50");
  const std::string unknown = "  epochs: 1\n  alternatives:\n"
                              "    - {id: x, networks: {VGG: vgg-16}, why: w}\n";
  EXPECT_THAT(load_error_at(suite_with("suite.yaml", "  epochs: 1\n", unknown), "suite.yaml", 11),
              HasSubstr("VGG"));
  const std::string no_workload = "  epochs: 1\n  alternatives:\n"
                                  "    - {id: x, networks: {ResNet: resnet-7}, why: w}\n";
  EXPECT_THAT(load_error_at(suite_with("suite.yaml", "  epochs: 1\n", no_workload), "suite.yaml", 11),
              HasSubstr("resnet-7"));
}

TEST(SuiteLoader, SetupReadingsMayMapAMethodToAnotherCommMethod) {
  const std::string reading = "  epochs: 1\n  alternatives:\n"
                              "    - {id: ring, methods: {NCCL: nccl}, why: w}\n";
  const Suite s = load_suite(suite_with("suite.yaml", "  epochs: 1\n", reading));
  const Suite ring = s.read_as(s.setup.alternatives.at(0));
  EXPECT_EQ(ring.comm_of("NCCL"), "nccl");
  EXPECT_EQ(ring.comm_of("P2P"), "p2p");  // the methods it does not name stay
  EXPECT_EQ(s.comm_of("NCCL"), "nccl_reduce_bcast");
  const std::string unknown = "  epochs: 1\n  alternatives:\n"
                              "    - {id: x, methods: {MPI: ring}, why: w}\n";
  EXPECT_THAT(load_error_at(suite_with("suite.yaml", "  epochs: 1\n", unknown), "suite.yaml", 11),
              HasSubstr("MPI"));
  const std::string no_comm = "  epochs: 1\n  alternatives:\n"
                              "    - {id: x, methods: {NCCL: nccl_ring}, why: w}\n";
  EXPECT_THAT(load_error_at(suite_with("suite.yaml", "  epochs: 1\n", no_comm), "suite.yaml", 11),
              HasSubstr("nccl_ring"));
}

// A network may run under its own framework, and a reading may change it; the others keep the
// setup's. An unknown network or framework is an error at its line.
TEST(SuiteLoader, ANetworkMayRunUnderItsOwnFrameworkAndAReadingMayChangeIt) {
  const Suite own = load_suite(suite_with(
      "suite.yaml", "networks: {LeNet: lenet, ResNet: resnet-50}",
      "networks: {LeNet: lenet, ResNet: {workload: resnet-50, framework: pytorch-ddp}}"));
  EXPECT_EQ(own.framework_of("ResNet"), "pytorch-ddp");
  EXPECT_EQ(own.framework_of("LeNet"), own.setup.framework);
  const std::string reading = "  epochs: 1\n  alternatives:\n"
                              "    - {id: ddp, frameworks: {LeNet: pytorch-ddp}, why: w}\n";
  const Suite s = load_suite(suite_with("suite.yaml", "  epochs: 1\n", reading));
  const Suite ddp = s.read_as(s.setup.alternatives.at(0));
  EXPECT_EQ(ddp.framework_of("LeNet"), "pytorch-ddp");
  EXPECT_EQ(ddp.framework_of("ResNet"), s.setup.framework);
  EXPECT_EQ(s.framework_of("LeNet"), s.setup.framework);
  const std::string unknown_network = "  epochs: 1\n  alternatives:\n"
                                      "    - {id: x, frameworks: {VGG: pytorch-ddp}, why: w}\n";
  EXPECT_THAT(load_error_at(suite_with("suite.yaml", "  epochs: 1\n", unknown_network), "suite.yaml",
                       11),
              HasSubstr("VGG"));
  const std::string unknown_framework = "  epochs: 1\n  alternatives:\n"
                                        "    - {id: x, frameworks: {LeNet: caffe}, why: w}\n";
  EXPECT_THAT(load_error_at(suite_with("suite.yaml", "  epochs: 1\n", unknown_framework),
                       "suite.yaml", 11),
              HasSubstr("caffe"));
}

TEST(SuiteLoader, UnknownKeyInAPointNamesFileLineAndTheNearestKey) {
  EXPECT_THAT(
      load_error_at(suite_with("speedup.yaml", "measured: 1.5", "measurd: 1.5"), "speedup.yaml", 5),
      AllOf(HasSubstr("unknown key 'measurd'"), HasSubstr("did you mean 'measured'?")));
}

TEST(SuiteLoader, UnknownKeyInTheSetup) {
  EXPECT_THAT(load_error_at(suite_with("suite.yaml", "  epochs: 1\n", "  epochs: 1\n  epoch: 1\n"),
                       "suite.yaml", 10),
              HasSubstr("unknown key 'epoch' in setup"));
}

TEST(SuiteLoader, MalformedYaml) {
  EXPECT_THAT(load_error_at(suite_with("speedup.yaml", "bounds:\n", "bounds: [\n"), "speedup.yaml", 8),
              HasSubstr("malformed YAML"));
}

TEST(SuiteLoader, NetworkTheSuiteDoesNotMap) {
  EXPECT_THAT(load_error_at(suite_with("speedup.yaml", "network: ResNet", "network: ResNett"),
                       "speedup.yaml", 8),
              HasSubstr("unknown network 'ResNett' (did you mean 'ResNet'?)"));
}

TEST(SuiteLoader, GpuCountTheSetupDoesNotRun) {
  EXPECT_THAT(load_error_at(suite_with("speedup.yaml", "gpus: 8", "gpus: 16"), "speedup.yaml", 8),
              HasSubstr("GPU count 16 is not one the suite's setup runs (setup.gpus: 1, 2, 4, 8)"));
}

TEST(SuiteLoader, APointGivenTwice) {
  EXPECT_THAT(load_error_at(suite_with("speedup.yaml", "gpus: 4", "gpus: 2"), "speedup.yaml", 6),
              HasSubstr("speedup/LeNet/P2P/2gpu/b16 is given twice"));
}

TEST(SuiteLoader, MissingTableFileBlamesTheLineNamingIt) {
  EXPECT_THAT(
      load_error_at(suite_with("suite.yaml", "[speedup.yaml]", "[speedups.yaml]"), "suite.yaml", 17),
      HasSubstr("no table file"));
}

TEST(SuiteLoader, UnknownClaimParamNamesTheClaimsFile) {
  EXPECT_THAT(load_error_at(suite_with("claims.yaml", "{networks: [LeNet], batches: [16], gpus: 8",
                                  "{netwroks: [LeNet], batches: [16], gpus: 8"),
                       "claims.yaml", 49),
              AllOf(HasSubstr("unknown key 'netwroks' in params of claim 'memory-within'"),
                    HasSubstr("did you mean 'networks'?")));
}

TEST(SuiteLoader, ClaimParamsThatFitNoForm) {
  EXPECT_THAT(load_error_at(suite_with("claims.yaml", "from_gpus: 2, to_gpus: [8], batch: 16}",
                                  "from_gpus: 2, batch: 16}"),
                       "claims.yaml", 33),
              AllOf(HasSubstr("params of claim 'wu-better' fit no form of kind wu_scaling"),
                    HasSubstr("better_than, methods, from_gpus, to_gpus, batch")));
}

TEST(SuiteLoader, UnknownClaimKind) {
  EXPECT_THAT(load_error_at(suite_with("claims.yaml", "kind: faster", "kind: fastr"), "claims.yaml", 3),
              HasSubstr("unknown claim kind 'fastr' (did you mean 'faster'?)"));
}

TEST(SuiteLoader, UnknownShippedSuiteListsTheKnownOnes) {
  EXPECT_THAT(config_error_of([] { load_suite("dgx1-mxnett"); }),
              HasSubstr("unknown validation suite 'dgx1-mxnett' (did you mean 'dgx1-mxnet'?)"));
}

}  // namespace
}  // namespace gpuscale::validation
