// The one result schema and writer (result_schema.hpp, result_writer.hpp): a row has the same
// columns in the same order as CSV and as JSON, every table view names columns of the schema, and
// the tables keep the layout `run` and `sweep` have always printed.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/experiment/result_writer.hpp"

namespace gpuscale::sim {
namespace {

ResultRow result(const std::string& comm, int gpus) {
  ResultRow r;
  r.topology = "dgx1-v100";
  r.workload = "resnet-50";
  r.comm = comm;
  r.exchange = "mxnet: horovod fusion 64 MiB every 5 ms";
  r.framework = "mxnet";
  r.precision = "fp32";
  r.scaling = "strong";
  r.gpus = gpus;
  r.batch = 32;
  r.iteration_s = 0.1234567891;
  r.epoch_s = 4567.891;
  r.setup_s = 1.0 / 3;
  r.speedup = 7.654321 * gpus / 8;
  r.throughput_img_s = 2345.6789;
  r.fpbp_s = 0.0912345;
  r.wu_s = 0.0234567;
  r.input_wait_s = 0.001;
  r.rest_s = -0.0004;
  r.memory_gpu0_gb = 5.2345;
  r.memory_max_other_gb = 4.5678;
  r.gpu_memory_gb = 16;
  r.link_utilisation = {{"nvlink", {0.9, 0.45}}, {"pcie", {0.95, 0.2}}};
  return r;
}

ResultRow sampled(ResultRow r) {
  r.spread = {.samples = 20, .machine_varies = true, .p10_s = 0.12, .p50_s = 0.123,
              .p90_s = 0.1256789, .speedup_p10 = 7.1, .speedup_p50 = 7.2345, .speedup_p90 = 7.3};
  return r;
}

const RunSettings kSettings{"default", 67.108864, "auto", 4, "cpu"};

std::vector<std::string> keys_of(const JsonRow& row) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : row.items()) keys.push_back(key);
  return keys;
}

std::vector<std::string> csv_header(const std::string& csv) {
  std::vector<std::string> fields;
  std::stringstream line(csv.substr(0, csv.find('\n')));
  for (std::string field; std::getline(line, field, ',');) fields.push_back(field);
  return fields;
}

TEST(ResultSchema, KeysAreUniqueAndEveryViewShowsColumnsOfTheSchemaWithAHeader) {
  std::set<std::string_view> keys;
  for (const Column& c : result_columns()) EXPECT_TRUE(keys.insert(c.key).second) << c.key;
  for (const auto* view : {&run_table_view(), &spread_table_view(), &sweep_table_measures()}) {
    for (const ViewColumn& v : *view) {
      ASSERT_NO_THROW(result_column(v.key)) << v.key;
      EXPECT_FALSE(v.header.empty() && result_column(v.key).table.header.empty()) << v.key;
    }
  }
  EXPECT_THROW(result_column("no_such_column"), std::logic_error);
}

TEST(ResultWriter, ARowHasTheSameColumnsInTheSameOrderAsCsvAndAsJson) {
  const ResultRow plain = result("nccl", 8), split = [] {
    ResultRow r = result("nccl", 8);
    r.spatial_ways = 4;
    return r;
  }();
  const ResultRow sampled_row = sampled(plain);
  for (const ResultRow* r : {&plain, &split, &sampled_row}) {
    for (const bool study : {false, true}) {
      OutputRow row{r, kSettings, std::nullopt};
      if (study) row.study = StudyPlace{3, "0123456789abcdef", "c4140 (k)"};
      const JsonRow json = row_json(row);
      std::vector<std::string> expected = keys_of(json);
      std::erase(expected, "link_utilisation");  // a nested object: JSON only
      std::erase(expected, "allreduce_mb");      // a list: JSON only
      if (r->spatial_ways == 1) std::erase(expected, "spatial");  // only where samples are split
      const std::string csv = rows_csv({json}, study ? RowsOf::Study : RowsOf::Run);
      EXPECT_EQ(csv_header(csv), expected) << csv;
      EXPECT_EQ(json.contains("index"), study);
      EXPECT_EQ(json.contains("samples"), r->spread.samples > 0);
      EXPECT_FALSE(json.contains("efficiency_p50_percent"));  // a table's figure
    }
  }
}

// results.csv gained `spatial` after the sampled columns; it keeps that place, while JSON keeps
// the schema's order (result_schema.hpp, Shown::Split).
TEST(ResultWriter, ASplitSampledRowHasItsSpatialColumnLastInCsv) {
  ResultRow r = sampled(result("nccl", 8));
  r.spatial_ways = 4;
  const JsonRow json = row_json({&r, kSettings, std::nullopt});
  const auto header = csv_header(rows_csv({json}, RowsOf::Run));
  EXPECT_EQ(header.back(), "spatial");
  EXPECT_EQ(header[header.size() - 2], "speedup_p90");
  const auto keys = keys_of(json);
  EXPECT_LT(std::find(keys.begin(), keys.end(), "spatial"),
            std::find(keys.begin(), keys.end(), "samples"));
}

TEST(ResultWriter, CsvCellsAreTheJsonValuesQuantitiesWithNineDigits) {
  const ResultRow r = result("nccl", 8);
  const JsonRow json = row_json({&r, kSettings, std::nullopt});
  const std::string csv = rows_csv({json}, RowsOf::Run);
  EXPECT_THAT(csv, ::testing::HasSubstr(
                       "\ndgx1-v100,resnet-50,nccl,mxnet: horovod fusion 64 MiB every 5 ms,mxnet,fp32,"
                       "default,67.108864,auto,4,cpu,strong,8,32,1,0.123456789,4567.891,0.333333333,"
                       "7.654321,"
                       "0.956790125,2345.6789,"));
  EXPECT_THAT(csv, ::testing::EndsWith(",5.2345,4.5678,16,true,0.95\n"));
  EXPECT_EQ(json["max_link_utilisation"], 0.95);
  EXPECT_EQ(json["link_utilisation"]["pcie"]["mean"], 0.2);
}

TEST(ResultWriter, AStudyWithNoRowsStillHasItsOwnColumns) {
  EXPECT_THAT(rows_csv({}, RowsOf::Study), ::testing::StartsWith("index,hash,machine,topology,"));
  EXPECT_THAT(rows_csv({}, RowsOf::Run), ::testing::StartsWith("topology,"));
}

// The layout `run` prints (its format strings before the schema, and since 2026-11-29 the
// throughput's unit), byte for byte.
TEST(ResultWriter, TheRunTableKeepsItsLayout) {
  const ResultRow one = result("nccl", 1), eight = result("nccl", 8), p2p = result("p2p", 8);
  std::vector<OutputRow> rows;
  for (const ResultRow* r : {&one, &eight, &p2p}) rows.push_back({r, kSettings, std::nullopt});
  std::string expected = fmt::format(
      "{:<13} {:<18} {:>4} {:>5} {:>10} {:>10} {:>7} {:>9} {:<15} {:>9} {:>9} {:>9} {:>9} "
      "{:>8} {:>8} {:>4}\n",
      "workload", "comm", "gpus", "batch", "iter ms", "epoch s", "speedup", "per s", "unit",
      "FP+BP ms", "WU ms", "input ms", "rest ms", "GPU0 GB", "other GB", "fits");
  for (const ResultRow* r : {&one, &eight, &p2p}) {
    if (r == &p2p) expected += "\n";  // another method
    expected += fmt::format(
        "{:<13} {:<18} {:>4} {:>5} {:>10.2f} {:>10.1f} {:>7.2f} {:>9.0f} {:<15} {:>9.2f} "
        "{:>9.2f} {:>9.2f} {:>9.2f} {:>8.2f} {:>8} {:>4}\n",
        r->workload, r->comm, r->gpus, r->batch, r->iteration_s * 1e3, r->epoch_s, r->speedup,
        r->throughput_img_s, r->unit, r->fpbp_s * 1e3, r->wu_s * 1e3, r->input_wait_s * 1e3,
        r->rest_s * 1e3, r->memory_gpu0_gb,
        r->gpus > 1 ? fmt::format("{:.2f}", r->memory_max_other_gb) : "-",
        r->fits_memory() ? "yes" : "NO");
  }
  EXPECT_EQ(rows_table(rows, run_table_view(), true), expected);
}

TEST(ResultWriter, TheSpreadTableKeepsItsLayout) {
  const ResultRow r = sampled(result("nccl", 8));
  const std::string expected =
      fmt::format("{:<13} {:<18} {:>4} {:>5} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9}\n",
                  "workload", "comm", "gpus", "batch", "mean ms", "p10 ms", "p50 ms", "p90 ms",
                  "spd p10", "spd p50", "spd p90", "eff p50 %") +
      fmt::format("{:<13} {:<18} {:>4} {:>5} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>8.3f} "
                  "{:>8.3f} {:>8.3f} {:>9.1f}\n",
                  r.workload, r.comm, r.gpus, r.batch, r.iteration_s * 1e3, r.spread.p10_s * 1e3,
                  r.spread.p50_s * 1e3, r.spread.p90_s * 1e3, r.spread.speedup_p10,
                  r.spread.speedup_p50, r.spread.speedup_p90, 100 * r.spread.speedup_p50 / r.gpus);
  EXPECT_EQ(rows_table({{&r, kSettings, std::nullopt}}, spread_table_view(), true), expected);
}

// A sweep's axes as the rows hold them, as wide as their widest cell, names left and numbers
// right; then its measures, without blank lines between methods.
TEST(ResultWriter, TheSweepTableKeepsItsLayout) {
  ResultRow big = result("nccl", 8);
  big.memory_gpu0_gb = 40;  // does not fit
  const ResultRow small = result("p2p", 1);
  const std::vector<OutputRow> rows = {{&big, kSettings, StudyPlace{0, "h", "c4140-k"}},
                                       {&small, kSettings, StudyPlace{1, "h", "dgx1"}}};
  std::vector<ViewColumn> view = {{.key = "machine", .as_written = true},
                                  {.key = "gpus", .as_written = true},
                                  {.key = "fusion_mb", .as_written = true}};
  view.insert(view.end(), sweep_table_measures().begin(), sweep_table_measures().end());
  std::string expected = fmt::format("{:<7} {:>4} {:>9} ", "machine", "gpus", "fusion_mb") +
                         fmt::format("{:>10} {:>10} {:>7} {:>6} {:>9} {:>9} {:>8} {:>4}\n",
                                     "iter ms", "epoch s", "speedup", "eff %", "FP+BP ms",
                                     "WU ms", "GPU0 GB", "fits");
  for (const auto& [machine, r] : {std::pair<const char*, const ResultRow*>{"c4140-k", &big},
                                   std::pair<const char*, const ResultRow*>{"dgx1", &small}}) {
    expected += fmt::format("{:<7} {:>4} {:>9} ", machine, r->gpus, "67.1089") +
                fmt::format("{:>10.2f} {:>10.1f} {:>7.2f} {:>6.0f} {:>9.2f} {:>9.2f} {:>8.2f} "
                            "{:>4}\n",
                            r->iteration_s * 1e3, r->epoch_s, r->speedup,
                            r->speedup / r->gpus * 100, r->fpbp_s * 1e3, r->wu_s * 1e3,
                            r->memory_gpu0_gb, r->fits_memory() ? "yes" : "NO");
  }
  EXPECT_EQ(rows_table(rows, view, false), expected);
}

}  // namespace
}  // namespace gpuscale::sim
