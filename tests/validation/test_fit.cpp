// The calibration set and `gpuscale fit`: a fit recovers a host cost from points simulated with
// it, refuses to write a cost that ends on its range's edge (the file stays as it was), writes the
// value and its provenance where the file says, once; and validate reports calibration points
// apart from the validation points its headline is made of.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>

#include "tests/support/test_support.hpp"
#include "tests/validation/tiny_suite.hpp"
#include "validation/src/comparison.hpp"
#include "validation/src/fit.hpp"
#include "validation/src/metrics.hpp"
#include "validation/src/predictions.hpp"
#include "workloads/src/framework.hpp"

namespace gpuscale::validation {
namespace {

namespace fs = std::filesystem;
using gpuscale::testing::config_error_of;
using gpuscale::testing::run_command;
using ::testing::HasSubstr;

const char* kPoint = "throughput/ResNet-50/MXNet/1gpu/b1";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A one-point calibration suite (ResNet-50 at batch 1 on one GPU, synthetic data) measuring
// `images_per_s`, and a copy of the shipped MXNet description whose only fitted parameter is
// python_per_key at `start_us` in [50 us, `high_us`] (and engine_op too, at its shipped range,
// where `engine_op_start_us` is given), calibrated on that point, in a folder of `name`'s own
// (ctest runs tests side by side). Returns the framework file's path.
std::string write_calibration(const std::string& name, double images_per_s, double start_us,
                              double high_us = 175,
                              std::optional<double> engine_op_start_us = std::nullopt) {
  const fs::path dir = fs::path(GPUSCALE_TEST_TMPDIR) / ("fit-" + name);
  fs::remove_all(dir);
  const fs::path suite = dir / "suites" / "one-point";
  fs::create_directories(suite);
  // The calibration names its suite; this process's suites are the test's own until the test
  // ends (see Fit).
  setenv("GPUSCALE_VALIDATION_DIR", (dir / "suites").c_str(), 1);
  std::ofstream(suite / "suite.yaml")
      << "name: one-point\ntitle: t\nsetup:\n  topology: dgx1-v100\n  framework: mxnet\n"
         "  gpus: [1]\n  batches: [1]\n  batch_per: gpu\n  epochs: 1\n  dataset: imagenet\n"
         "  data: synthetic\n  strong_images: 1000\n  weak_images_per_gpu: 1000\n"
         "  precision: fp32\n  gpu_memory: 16 GB\nmethods: {MXNet: p2p}\n"
         "networks: {ResNet-50: resnet-50}\ntables: [throughput.yaml]\n";
  std::ofstream(suite / "throughput.yaml")
      << "id: throughput\ntitle: t\nmetric: images_per_s\npoints:\n"
      << "  - {network: ResNet-50, method: MXNet, gpus: 1, batch: 1, scaling: strong, measured: "
      << images_per_s << "}\n";

  std::string text = read(wl::shipped_frameworks().resolve("mxnet", "", Origin{}));
  for (const std::string sourced : {"engine_op", "context"}) {
    if (sourced == "engine_op" && engine_op_start_us) continue;
    text = std::regex_replace(
        text, std::regex(sourced + R"(: \{value: ([^,]+), fitted: true[^}]*\})"), sourced + ": $1");
  }
  if (engine_op_start_us) {
    text = std::regex_replace(text, std::regex(R"(engine_op: \{value: [^,]+,)"),
                              "engine_op: {value: " + std::to_string(*engine_op_start_us) + " us,");
  }
  text = std::regex_replace(text, std::regex(R"(python_per_key: \{value: [^}]+\})"),
                            "python_per_key: {value: " + std::to_string(start_us) +
                                " us, fitted: true, range: [50 us, " + std::to_string(high_us) + " us]}");
  text = text.substr(0, text.find("\ncalibration:") + 1) +
         "calibration:\n  set: one point\n  points:\n    one-point: [" + kPoint + "]\n";
  const fs::path file = dir / "framework.yaml";
  std::ofstream(file) << text;
  return file.string();
}

// What the one-point suite's point is predicted at with python_per_key = `us`.
double predicted_throughput(const std::string& framework_file, double us) {
  auto f = std::make_shared<wl::FrameworkConfig>(wl::load_framework(framework_file));
  f->host.python_per_key.value = Seconds{us * 1e-6};
  const Suite suite = load_suite("one-point");
  const Metrics metrics(suite, predict(suite, nullptr, {}, f));
  return metrics.predicted(suite.tables[0], suite.tables[0].points[0]);
}

// write_calibration points GPUSCALE_VALIDATION_DIR at the test's own suites; later tests in this
// process (the shipped suites' `gpuscale validate`) must see the variable as it was before.
class Fit : public ::testing::Test {
 private:
  gpuscale::testing::ScopedEnv validation_dir_{"GPUSCALE_VALIDATION_DIR"};
};

TEST_F(Fit, RecoversAHostCostFromPointsSimulatedWithIt) {
  // 161 keys x 400 us = 64 ms of Python per iteration: well above ResNet-50's GPU and engine
  // time at batch 1, so the point depends on the cost. (A range wider than the shipped one:
  // inside [50, 175] us the batch-1 iteration is bound by the engine, not by Python.)
  const std::string probe = write_calibration("probe-recover", 1, 100, 1000);
  const double truth = predicted_throughput(probe, 400);
  ASSERT_LT(truth, predicted_throughput(probe, 300));  // the point does depend on it

  const FitResult r = fit_framework(write_calibration("recover", truth, 100, 1000));
  ASSERT_EQ(r.parameters.size(), 1u);
  EXPECT_EQ(r.parameters[0].name, "python_per_key");
  EXPECT_EQ(r.parameters[0].outcome, FittedParameter::Outcome::Fitted);
  EXPECT_NEAR(r.parameters[0].after * 1e6, 400, 4);  // within 1%
  ASSERT_EQ(r.residuals_pct.size(), 1u);
  EXPECT_EQ(r.residuals_pct[0].first, (wl::SuitePoint{"one-point", kPoint}));
  EXPECT_NEAR(r.residuals_pct[0].second, 0, 0.5);
}

// Same inputs, same fit: two costs fitted on one point trade off along a ridge of equal fits,
// and the search starts from the middle of each range, so the values the file held before (the
// last fit's, or a user's) cannot pick the point of the ridge it ends on.
TEST_F(Fit, TheResultDoesNotDependOnTheFilesFormerValues) {
  const double measured = 34.54;  // MXNet's one-V100 ResNet-50 at batch 1 (fs §4)
  const FitResult low = fit_framework(write_calibration("start-low", measured, 170, 175, 6.5));
  const FitResult high = fit_framework(write_calibration("start-high", measured, 100, 175, 40));
  ASSERT_EQ(low.parameters.size(), 2u);
  ASSERT_EQ(high.parameters.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_DOUBLE_EQ(low.parameters[i].after, high.parameters[i].after) << low.parameters[i].name;
  }
  EXPECT_NE(low.parameters[0].before, high.parameters[0].before);
}

TEST_F(Fit, WritesTheValueAndItsProvenanceOnce) {
  const std::string probe = write_calibration("probe-write", 1, 100, 1000);
  const std::string file = write_calibration("write", predicted_throughput(probe, 400), 100, 1000);
  const FitResult r = fit_framework(file);
  write_fit(r, "2000-01-02");
  write_fit(fit_framework(file), "2000-01-03");  // a second fit replaces the first's record

  const wl::FrameworkConfig f = wl::load_framework(file);
  EXPECT_NEAR(f.host.python_per_key.value.value * 1e6, r.parameters[0].after * 1e6, 0.05);
  EXPECT_TRUE(f.host.python_per_key.fitted);
  EXPECT_EQ(f.calibration.fitted_on, "2000-01-03");
  ASSERT_EQ(f.calibration.residuals_pct.size(), 1u);
  EXPECT_EQ(f.calibration.residuals_pct[0].first, (wl::SuitePoint{"one-point", kPoint}));
  const std::string text = read(file);
  EXPECT_EQ(text.find("  fit:"), text.rfind("  fit:"));
  EXPECT_THAT(text, HasSubstr("# (B) Python per key"));  // comments are kept
}

TEST_F(Fit, RefusesToWriteACostThatEndsOnItsRangesEdge) {
  // A third of the throughput at 400 us per key needs far more than the range's 1 ms: the model
  // lacks a mechanism.
  const std::string probe = write_calibration("probe-edge", 1, 100, 1000);
  const std::string file = write_calibration("edge", predicted_throughput(probe, 400) / 3, 100, 1000);
  const std::string before = read(file);
  const FitResult r = fit_framework(file);
  ASSERT_EQ(r.parameters.size(), 1u);
  EXPECT_EQ(r.parameters[0].outcome, FittedParameter::Outcome::AtEdge);
  EXPECT_NEAR(r.parameters[0].after * 1e6, 1000, 10);
  EXPECT_THAT(config_error_of([&] { write_fit(r, "2000-01-02"); }),
              HasSubstr("a mechanism is missing"));
  EXPECT_EQ(read(file), before);
}

TEST_F(Fit, LeavesACostThePointsHardlyDependOnAsItWas) {
  // Inside [50, 100] us (161 keys: at most 16 ms of Python) the batch-1 ResNet-50 iteration is
  // bound by the GPU and the engine: however far the point is, no value there fits it better.
  const std::string probe = write_calibration("probe-flat", 1, 60, 100);
  const FitResult r =
      fit_framework(write_calibration("flat", predicted_throughput(probe, 60) / 3, 60, 100));
  ASSERT_EQ(r.parameters.size(), 1u);
  EXPECT_EQ(r.parameters[0].outcome, FittedParameter::Outcome::Undetermined);
  EXPECT_DOUBLE_EQ(r.parameters[0].after, r.parameters[0].before);
}

TEST_F(Fit, NamesACalibrationPointTheSuiteLacks) {
  const std::string file = write_calibration("missing", 30, 100);
  std::string text = read(file);
  text.replace(text.find(kPoint), std::string(kPoint).size(), "throughput/ResNet-50/MXNet/1gpu/b7");
  std::ofstream(file) << text;
  EXPECT_THAT(config_error_of([&] { fit_framework(file); }),
              HasSubstr("calibration point throughput/ResNet-50/MXNet/1gpu/b7 is not a point"));
}

TEST_F(Fit, DryRunThroughTheCliLeavesTheFileAlone) {
  const std::string file = write_calibration("cli", 30, 100);
  const std::string before = read(file);
  const auto r = run_command(std::string(GPUSCALE_EXECUTABLE) + " fit --dry-run --framework " + file);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("python_per_key"));
  EXPECT_THAT(r.out, HasSubstr("[50 us, 175 us]"));
  EXPECT_THAT(r.out, HasSubstr("dry run"));
  EXPECT_EQ(read(file), before);
}

TEST(Calibration, PointsInTheSetAreReportedApartFromTheHeadline) {
  const Suite suite = load_suite(testing::write_suite(testing::tiny_suite_files()));
  wl::Calibration calibration;
  calibration.points = {{suite.name, "speedup/LeNet/P2P/2gpu/b16"}};
  const Comparison c = compare(suite, testing::metrics_of(suite, testing::ideal_run), calibration);
  ASSERT_EQ(c.points.size(), 2u);
  EXPECT_TRUE(c.points[0].calibration);
  EXPECT_FALSE(c.points[1].calibration);
  // The other point is suspect, so no validation point is left for the headline.
  EXPECT_FALSE(c.tables[0].mape_pct.has_value());
  EXPECT_FALSE(c.overall_mape_pct.has_value());
  EXPECT_NEAR(*c.tables[0].calibration_mape_pct, 100.0 / 3, 1e-12);
  EXPECT_EQ(c.calibration_points, 1);
  EXPECT_EQ(c.overall_points, 0);

  calibration.points = {{"another-suite", "speedup/LeNet/P2P/2gpu/b16"}};  // only in its own suite
  EXPECT_FALSE(compare(suite, testing::metrics_of(suite, testing::ideal_run), calibration)
                   .points[0]
                   .calibration);
}

TEST(Calibration, ShippedSetIsMarkedInValidatesJson) {
  const auto r = run_command(std::string(GPUSCALE_EXECUTABLE) +
                             " validate --suite mxnet-v100 --format json 2>/dev/null");
  ASSERT_EQ(r.status, 0);
  const auto json = nlohmann::json::parse(r.out);
  int calibration = 0;
  for (const auto& p : json["points"]) calibration += p["role"] == "calibration" ? 1 : 0;
  EXPECT_GT(calibration, 0);
  int in_this_suite = 0;
  for (const auto& p : json["framework"]["calibration_points"])
    in_this_suite += p["suite"] == "mxnet-v100" ? 1 : 0;
  EXPECT_EQ(calibration, in_this_suite);
  EXPECT_EQ(json["framework"]["fitted"].size(), 3u);  // at most three per framework
  for (const auto& f : json["framework"]["fitted"]) {
    EXPECT_GE(f["value"].get<double>(), f["range"][0].get<double>());
    EXPECT_LE(f["value"].get<double>(), f["range"][1].get<double>());
  }
}

}  // namespace
}  // namespace gpuscale::validation
