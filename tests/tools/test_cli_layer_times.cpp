// `gpuscale workload layers` as a user comparing with a profiler runs it: the CSV's long format
// names every layer of the workload file with its passes, convolutions with their algorithm, and
// totals that are the rows' sum; the same input gives the same bytes; a larger batch never takes
// less time; an unknown GPU is one line and a non-zero exit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using testing::run_command;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

struct CsvRow {
  std::string layer;
  std::string type;
  std::string pass;
  std::string precision;
  double time_us = 0;
  double cast_us = 0;
  std::string algorithm;
  std::string workspace_bytes;
};

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();  // getline drops it
  return parts;
}

// The rows after the header; the header goes to `header`.
std::vector<CsvRow> parse_csv(const std::string& csv, std::string& header) {
  std::vector<std::string> lines = split(csv, '\n');
  header = lines.empty() ? "" : lines.front();
  std::vector<CsvRow> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const std::vector<std::string> f = split(lines[i], ',');
    EXPECT_EQ(f.size(), 8u) << lines[i];
    if (f.size() != 8) continue;
    const double cast_us = f[5].empty() ? 0 : std::stod(f[5]);
    rows.push_back({f[0], f[1], f[2], f[3], std::stod(f[4]), cast_us, f[6], f[7]});
  }
  return rows;
}

TEST(CliLayerTimes, LenetCsvNamesEveryLayerAndTotalsTheRows) {
  const auto r = run_command(kGpuscale + " workload layers lenet --batch 16 --format csv");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string header;
  const std::vector<CsvRow> rows = parse_csv(r.out, header);
  EXPECT_EQ(header, "layer,type,pass,precision,time_us,cast_us,algorithm,workspace_bytes");

  std::map<std::string, double> total_of_pass;  // the TOTAL rows
  std::map<std::string, double> sum_of_pass;    // the layers' rows
  for (const CsvRow& row : rows) {
    if (row.layer == "TOTAL" && row.type.empty()) {
      total_of_pass[row.pass] = row.time_us;
      continue;
    }
    EXPECT_GT(row.time_us, 0) << row.layer << " " << row.pass;
    if (row.type == "conv") {
      EXPECT_THAT(row.algorithm, AnyOf("implicit_gemm", "winograd", "winograd_fused")) << row.layer;
      EXPECT_FALSE(row.workspace_bytes.empty()) << row.layer;
    }
    sum_of_pass[row.pass] += row.time_us;
  }

  const wl::Workload lenet = wl::load_workload("lenet");
  for (const wl::Layer& layer : lenet.layers) {
    if (layer.type == wl::LayerType::Input) continue;
    EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const CsvRow& row) {
      return row.layer == layer.name && row.pass == "forward";
    })) << layer.name;
  }
  ASSERT_EQ(total_of_pass.size(), 3u);
  for (const auto& [pass, total] : total_of_pass) {
    EXPECT_NEAR(sum_of_pass[pass], total, 1e-6 * total) << pass;
  }
}

// --precision amp with PyTorch 1.6: convolutions and the classifier on FP16 Tensor Cores with
// their weight casts, the softmax in FP32; every pass faster than in FP32 but for the FP32 ones.
TEST(CliLayerTimes, AmpGivesEachLayerItsPrecisionAndItsCasts) {
  const std::string command =
      kGpuscale + " workload layers resnet-50 --batch 64 --framework pytorch-ddp --format csv";
  const auto fp32 = run_command(command);
  const auto amp = run_command(command + " --precision amp");
  ASSERT_EQ(fp32.status, 0) << fp32.err;
  ASSERT_EQ(amp.status, 0) << amp.err;
  std::string header;
  const std::vector<CsvRow> fp32_rows = parse_csv(fp32.out, header);
  const std::vector<CsvRow> amp_rows = parse_csv(amp.out, header);
  ASSERT_EQ(fp32_rows.size(), amp_rows.size());
  for (size_t i = 0; i < amp_rows.size(); ++i) {
    const CsvRow& a = amp_rows[i];
    if (a.layer == "TOTAL") {
      EXPECT_LT(a.time_us, fp32_rows[i].time_us) << a.pass;
      continue;
    }
    EXPECT_EQ(fp32_rows[i].precision, "fp32") << a.layer;
    if (a.type == "conv" || a.type == "fc") {
      EXPECT_EQ(a.precision, "tensor") << a.layer;
      EXPECT_EQ(a.cast_us > 0, a.pass != "backward_data") << a.layer << " " << a.pass;
    } else if (a.type == "softmax") {
      EXPECT_EQ(a.precision, "fp32") << a.layer;
    }
  }
  const auto refused = run_command(command + " --precision tf32");
  EXPECT_EQ(refused.status, 2);
  EXPECT_THAT(refused.err, HasSubstr("PyTorch 1.6 has no TF32"));
  EXPECT_TRUE(refused.out.empty());
}

TEST(CliLayerTimes, SameInputSameBytes) {
  for (const char* format : {"table", "csv", "json"}) {
    const std::string command =
        kGpuscale + " workload layers lenet --batch 16 --format " + format;
    const auto first = run_command(command);
    ASSERT_EQ(first.status, 0) << first.err;
    EXPECT_EQ(first.out, run_command(command).out) << format;
  }
}

TEST(CliLayerTimes, UnknownGpuIsOneLineNamingIt) {
  const auto r = run_command(kGpuscale + " workload layers lenet --gpu NoSuchGpu");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::string err = r.err;  // the message names the GPU as the catalogue looks it up: lower case
  std::transform(err.begin(), err.end(), err.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  EXPECT_THAT(err, HasSubstr("nosuchgpu"));
}

TEST(CliLayerTimes, LargerBatchNeverTakesLess) {
  auto totals = [](int batch) {
    const auto r = run_command(kGpuscale + " workload layers resnet-50 --format json --batch " +
                               std::to_string(batch));
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out)["total_us"];
  };
  const nlohmann::json small = totals(16);
  const nlohmann::json large = totals(64);
  for (const char* pass : {"forward", "backward_data", "backward_weights"}) {
    EXPECT_GT(small[pass].get<double>(), 0) << pass;
    EXPECT_GE(large[pass].get<double>(), small[pass].get<double>()) << pass;
  }
}

}  // namespace
}  // namespace gpuscale
