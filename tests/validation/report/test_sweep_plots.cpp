// A sweep's figures from hand-made rows (no simulation): which files a study's axes give, in
// which order, the same bytes for the same rows, series split off into figures when a legend
// would grow too long, and errors as ConfigError.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/test_support.hpp"
#include "tests/validation/report/svg_check.hpp"
#include "validation/report/figure_files.hpp"
#include "validation/report/sweep_plots.hpp"
#include "validation/report/sweep_series.hpp"

namespace gpuscale::report {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

sweep::SweepRow row_of(const std::string& comm, int batch, int gpus) {
  sweep::SweepRow row;
  row.run.machine.label = "dgx1-v100";
  row.run.machine.topology = "dgx1-v100";
  row.run.config = {"resnet-50", comm, batch, gpus};
  sim::ResultRow& r = row.result;
  r.gpus = gpus;
  r.batch = batch;
  r.speedup = gpus == 1 ? 1 : 0.75 * gpus;
  r.fpbp_s = 0.1;
  r.exposed_comm_s = 0.01 * gpus;
  r.wu_s = 0.02 + r.exposed_comm_s;
  r.iteration_s = r.fpbp_s + r.wu_s;
  r.memory_gpu0_gb = 6;
  r.memory_max_other_gb = gpus == 1 ? 0 : 5;
  if (gpus > 1) r.link_uses = {{0, true, 0.5}, {0, false, 0.25}};
  return row;
}

// Every combination, in study order: comms outermost, then batches, then GPU counts.
std::pair<sweep::Study, std::vector<sweep::SweepRow>> study_of(
    const std::vector<std::string>& comms, const std::vector<int>& batches,
    const std::vector<int>& gpus) {
  sweep::Study study;
  study.name = "test";
  if (comms.size() > 1) study.axes.push_back("comm");
  if (batches.size() > 1) study.axes.push_back("batch");
  if (gpus.size() > 1) study.axes.push_back("gpus");
  std::vector<sweep::SweepRow> rows;
  for (const std::string& comm : comms) {
    for (int batch : batches) {
      for (int g : gpus) {
        rows.push_back(row_of(comm, batch, g));
        rows.back().index = rows.size() - 1;
        study.runs.push_back(rows.back().run);
      }
    }
  }
  return {study, rows};
}

std::string fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(GPUSCALE_TEST_TMPDIR) / "sweep-plots" / name;
  fs::remove_all(dir);
  return dir.string();
}

std::vector<std::string> names_of(const std::vector<std::string>& paths) {
  std::vector<std::string> names;
  for (const auto& p : paths) names.push_back(fs::path(p).filename().string());
  return names;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Two sets of figures with the same names and, file by file, the same bytes.
void expect_same_files(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  ASSERT_EQ(names_of(a), names_of(b));
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(read_file(a[i]), read_file(b[i])) << a[i];
}

// The y coordinates of the first polyline (a line chart's first series: ideal scaling).
std::vector<double> ideal_ys(const std::string& svg) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex("<polyline points=\"([^\"]+)\"")));
  std::vector<double> ys;
  const std::string points = m[1];
  const std::regex point("[0-9.]+,([0-9.]+)");
  for (auto it = std::sregex_iterator(points.begin(), points.end(), point);
       it != std::sregex_iterator(); ++it)
    ys.push_back(std::stod((*it)[1]));
  return ys;
}

TEST(SweepPlots, CommTimesGpusGivesScalingBreakdownMemoryAndAHeatMapPerMethod) {
  const auto [study, rows] = study_of({"p2p", "nccl"}, {32}, {1, 2, 4, 8});
  const std::string dir = fresh_dir("comm-gpus");
  const auto paths = write_sweep_plots(study, rows, dir);
  EXPECT_THAT(names_of(paths),
              ElementsAre("speedup-resnet-50.svg", "efficiency-resnet-50.svg",
                          "breakdown-resnet-50.svg", "memory-resnet-50.svg",
                          "links-dgx1-v100-resnet-50-p2p.svg",
                          "links-dgx1-v100-resnet-50-nccl.svg"));
  for (const auto& p : paths) testing::expect_well_formed_svg(read_file(p), p);

  const std::string speedup = read_file(paths[0]);
  EXPECT_THAT(speedup, HasSubstr("resnet-50: speedup over 1 GPU (dgx1-v100, batch 32)"));
  EXPECT_THAT(speedup, HasSubstr(">p2p</text>"));
  EXPECT_THAT(speedup, HasSubstr(">nccl</text>"));
  const auto rising = ideal_ys(speedup);  // SVG's y grows downwards
  ASSERT_EQ(rising.size(), 4u);
  EXPECT_TRUE(std::is_sorted(rising.rbegin(), rising.rend()));
  EXPECT_GT(rising.front(), rising.back());
  const auto flat = ideal_ys(read_file(paths[1]));  // 100% at every GPU count
  ASSERT_EQ(flat.size(), 4u);
  EXPECT_EQ(std::count(flat.begin(), flat.end(), flat.front()), 4);

  EXPECT_THAT(read_file(paths[2]), HasSubstr("communication and host, exposed"));
  EXPECT_THAT(read_file(paths[2]), HasSubstr("waiting for the next batch"));
  EXPECT_THAT(read_file(paths[3]), HasSubstr("fullest other GPU"));
  const std::string links = read_file(paths[4]);
  EXPECT_THAT(links, HasSubstr("link utilisation, resnet-50 with p2p on 8 GPUs, batch 32"));
  EXPECT_THAT(links, HasSubstr(">50%</text>"));
}

TEST(SweepPlots, TheSameRowsGiveTheSameBytes) {
  const auto [study, rows] = study_of({"p2p", "nccl"}, {32}, {1, 8});
  const auto first = write_sweep_plots(study, rows, fresh_dir("first"));
  const auto second = write_sweep_plots(study, rows, fresh_dir("second"));
  expect_same_files(first, second);
}

TEST(SweepPlots, TheBreakdownSplitsTheIterationWhateverWuHolds) {
  // WU is only what runs after backward; a run waiting on its input pipeline has a small WU and a
  // long iteration. The breakdown's bars split the iteration itself, so WU does not move them.
  auto [study, rows] = study_of({"p2p"}, {32}, {1, 8});
  const auto with_wu = write_sweep_plots(study, rows, fresh_dir("with-wu"));
  for (sweep::SweepRow& row : rows) row.result.wu_s = 0;
  const auto without_wu = write_sweep_plots(study, rows, fresh_dir("without-wu"));
  expect_same_files(with_wu, without_wu);
}

TEST(SweepPlots, TheBreakdownShowsTheWaitForInputApart) {
  // The wait for the next batch is part of the time the GPU is not running kernels: moving time
  // from communication to it changes the bars' parts, not the breakdown's files.
  auto [study, rows] = study_of({"p2p"}, {32}, {1, 8});
  for (sweep::SweepRow& row : rows) row.result.input_wait_s = 0;
  const auto no_wait = write_sweep_plots(study, rows, fresh_dir("no-wait"));
  for (sweep::SweepRow& row : rows) row.result.input_wait_s = row.result.exposed_comm_s / 2;
  const auto waiting = write_sweep_plots(study, rows, fresh_dir("waiting"));
  ASSERT_EQ(names_of(no_wait), names_of(waiting));
  EXPECT_NE(read_file(no_wait[2]), read_file(waiting[2]));  // breakdown-resnet-50.svg
  EXPECT_EQ(read_file(no_wait[0]), read_file(waiting[0]));  // the speedups do not move
}

TEST(SweepPlots, OneGpuCountGivesNoScalingFiguresAndOneGpuNoHeatMap) {
  const auto [study, rows] = study_of({"p2p", "nccl"}, {16, 32}, {1});
  const auto paths = write_sweep_plots(study, rows, fresh_dir("one-gpu"));
  EXPECT_THAT(names_of(paths), ElementsAre("breakdown-resnet-50.svg", "memory-resnet-50.svg"));
}

TEST(SweepPlots, TooManySeriesSplitTheFiguresByBatchAndHeatMapsUseTheFirstBatch) {
  const auto [study, rows] =
      study_of({"p2p", "nccl", "nccl_ring", "nccl_tree", "hierarchical"}, {64, 16}, {1, 8});
  const auto groups = group_rows(study, rows);
  ASSERT_EQ(groups.size(), 2u);  // 5 methods x 2 batches = 10 series > kMaxSeries
  EXPECT_EQ(groups[0].name, "resnet-50-batch-64");
  EXPECT_EQ(groups[0].label, "resnet-50, batch 64");
  EXPECT_EQ(groups[0].series.size(), 5u);
  EXPECT_EQ(groups[0].series[0].label, "p2p");
  EXPECT_THAT(groups[0].gpus, ElementsAre(1, 8));

  const auto paths = write_sweep_plots(study, rows, fresh_dir("split"));
  const auto names = names_of(paths);
  ASSERT_EQ(names.size(), 8u + 5u);
  EXPECT_EQ(names[0], "speedup-resnet-50-batch-64.svg");
  EXPECT_EQ(names[4], "speedup-resnet-50-batch-16.svg");
  EXPECT_EQ(names[8], "links-dgx1-v100-resnet-50-p2p.svg");
  EXPECT_THAT(read_file(paths[8]), HasSubstr("batch 64"));
}

TEST(SweepPlots, SeriesOfTwoAxesAreLabelledWithBoth) {
  const auto [study, rows] = study_of({"p2p", "nccl"}, {16, 32}, {1, 8});
  const auto groups = group_rows(study, rows);
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].series.size(), 4u);
  EXPECT_EQ(groups[0].series[0].label, "p2p batch 16");
  EXPECT_EQ(groups[0].context, "dgx1-v100");
}

TEST(SweepPlots, FileNamesAreLowerCaseLettersDigitsDotsAndDashes) {
  EXPECT_EQ(file_slug("Inception-v3, batch 32"), "inception-v3-batch-32");
  EXPECT_EQ(file_slug("fusion 0.5 MB"), "fusion-0.5-mb");
  EXPECT_EQ(file_slug("../../etc/My Machine"), "etc-my-machine");
}

TEST(SweepPlots, AFolderThatCannotBeMadeIsAConfigError) {
  const std::string file = testing::write_temp_file("not-a-folder", "x");
  const auto [study, rows] = study_of({"p2p"}, {32}, {1, 8});
  EXPECT_THAT(testing::config_error_of([&] { write_sweep_plots(study, rows, file + "/figures"); }),
              HasSubstr("cannot create folder"));
}

}  // namespace
}  // namespace gpuscale::report
