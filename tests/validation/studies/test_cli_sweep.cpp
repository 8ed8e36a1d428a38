// `gpuscale sweep` as a user runs it: a study's rows, a resumed study that simulates nothing
// twice, an extended study that simulates only its new runs, shards that merge to the bytes of
// one sweep, cache invalidation when a machine file changes, and bad studies (one line, exit 2).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/test_support.hpp"
#include "tests/validation/studies/sweep_folders.hpp"
#include "topologies/core/shipped_files.hpp"
#include "validation/studies/study_loader.hpp"

namespace gpuscale {
namespace {

namespace fs = std::filesystem;
using testing::kGpuscale;
using testing::out_dir;
using testing::read_file;
using testing::run_command;

nlohmann::json results(const std::string& dir) {
  return nlohmann::json::parse(read_file(fs::path(dir) / "results.json"));
}

// The text table in `out`: its header (the line that starts with `first_axis`) and the rows under
// it, up to the first blank line.
std::vector<std::string> table_lines(const std::string& out, const std::string& first_axis) {
  std::vector<std::string> lines;
  size_t at = out.find("\n" + first_axis);
  if (at == std::string::npos) return lines;
  for (++at; at < out.size() && out[at] != '\n';) {
    const size_t end = std::min(out.find('\n', at), out.size());
    lines.push_back(out.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// Whether every row's cell under `header` ends in the text column its header ends in (`right`:
// numbers) or starts in the one it starts in (names): the cell's edge is a non-blank with a
// blank, or the line's end, beside it.
bool aligned_under(const std::vector<std::string>& table, const std::string& header, bool right) {
  const size_t start = table.at(0).find(header);
  if (start == std::string::npos) return false;
  const size_t edge = right ? start + header.size() - 1 : start;
  for (size_t i = 1; i < table.size(); ++i) {
    const std::string& row = table[i];
    if (edge >= row.size() || row[edge] == ' ') return false;
    const bool blank_beside = right ? edge + 1 == row.size() || row[edge + 1] == ' '
                                    : edge == 0 || row[edge - 1] == ' ';
    if (!blank_beside) return false;
  }
  return true;
}

const char* kTinyStudy =
    "name: tiny\n"
    "base: {workload: lenet, batch: 16, images: 25600, without: input}\n"
    "axes:\n"
    "  machine:\n"
    "    - dgx1-v100\n"
    "    - {name: dgx1-no-01, base: dgx1-v100, links: [{a: gpu0, b: gpu1, remove: true}]}\n"
    "  comm: [p2p, nccl_reduce_bcast]\n"
    "  gpus: [1, 2]\n";

TEST(CliSweep, RunsTheCrossProductInStudyOrderWithSpeedups) {
  const std::string study = testing::write_temp_file("tiny.yaml", kTinyStudy);
  const std::string out = out_dir("cross");
  const auto r = run_command(kGpuscale + " sweep " + study + " --out " + out + " --jobs 2");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = results(out);
  ASSERT_EQ(j["rows"].size(), 8u);
  EXPECT_EQ(j["runs"], 8);
  // First axis outermost: machine, then comm, then gpus.
  EXPECT_EQ(j["rows"][0]["machine"], "dgx1-v100");
  EXPECT_EQ(j["rows"][4]["machine"], "dgx1-no-01");
  EXPECT_EQ(j["rows"][2]["comm"], "nccl_reduce_bcast");
  EXPECT_EQ(j["rows"][1]["gpus"], 2);
  for (const auto& row : j["rows"]) {
    if (row["gpus"] == 1) {
      EXPECT_DOUBLE_EQ(row["speedup"].get<double>(), 1.0);
    }
    EXPECT_GT(row["iteration_s"].get<double>(), 0);
  }
  // Without the gpu0-gpu1 NVLink the 2-GPU P2P copy takes a longer way (PCIe): slower, unless
  // both runs wait for the input pipeline.
  EXPECT_GT(j["rows"][5]["iteration_s"].get<double>(), j["rows"][1]["iteration_s"].get<double>());
  const std::string csv = read_file(fs::path(out) / "results.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 9);  // header + 8 rows
  EXPECT_NE(read_file(fs::path(out) / "study.yaml").find("dgx1-no-01"), std::string::npos);
  // The table: names left-aligned under their headers, numbers (the gpus axis too) right-aligned.
  const auto table = table_lines(r.out, "machine");
  ASSERT_EQ(table.size(), 9u) << r.out;  // header + 8 rows
  for (const auto& [header, right] : {std::pair{"machine", false}, {"comm", false}, {"gpus", true},
                                      {"iter ms", true}, {"fits", true}}) {
    EXPECT_TRUE(aligned_under(table, header, right)) << header << " in\n" << r.out;
  }
}

// The studies docs/sweeps.md lists load, with the run counts its table gives, and no other
// ships.
TEST(ShippedStudies, LoadWithTheRunsTheDocsList) {
  const fs::path studies = fs::path(data_root()) / "docs" / "studies";
  const std::map<std::string, size_t> runs = {{"dgx1-p2p-vs-nccl.yaml", 120},
                                              {"nvlink-matters.yaml", 84},
                                              {"lassen-scaling.yaml", 72},
                                              {"lassen-variability.yaml", 24},
                                              {"lassen-spatial.yaml", 8}};
  for (const auto& [file, count] : runs) {
    EXPECT_EQ(sweep::load_study_file((studies / file).string()).runs.size(), count) << file;
  }
  size_t shipped = 0;
  for (const auto& entry : fs::directory_iterator(studies)) {
    shipped += entry.path().extension() == ".yaml" ? 1 : 0;
  }
  EXPECT_EQ(shipped, runs.size()) << "a study ships that docs/sweeps.md does not list";
}

// A sampled study (docs/variability.md): each row carries its percentiles, the CSV its columns,
// the speedup figure a band, and the seed is part of every run's cache key.
TEST(CliSweep, ASampledStudyCarriesItsPercentilesIntoRowsAndFigures) {
  const std::string machine = testing::write_temp_file(
      "noisy.yaml", "base: dgx1-v100\nname: noisy\nvariability: {compute: {distribution: normal, "
                    "cv: 0.05, source: test}}\n");
  const auto study_with_seed = [&](int seed) {
    return testing::write_temp_file(
        "sampled.yaml", "name: sampled\nbase: {topology: " + machine +
                            ", workload: alexnet, batch: 16, comm: nccl, images: 25600, "
                            "samples: 20, seed: " + std::to_string(seed) + ", without: input}\n"
                            "axes:\n  gpus: [1, 4]\n");
  };
  const std::string out = out_dir("sampled");
  const std::string figures = out_dir("sampled-figures");
  const auto r = run_command(kGpuscale + " sweep " + study_with_seed(1) + " --out " + out +
                             " --plot " + figures);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = results(out);
  ASSERT_EQ(j["rows"].size(), 2u);
  const auto& four = j["rows"][1];
  EXPECT_EQ(four["samples"], 20);
  EXPECT_LE(four["iteration_p10_s"].get<double>(), four["iteration_p50_s"].get<double>());
  EXPECT_LE(four["iteration_p50_s"].get<double>(), four["iteration_p90_s"].get<double>());
  EXPECT_LT(four["iteration_p10_s"].get<double>(), four["iteration_p90_s"].get<double>());
  EXPECT_LE(four["speedup_p10"].get<double>(), four["speedup_p90"].get<double>());
  EXPECT_NE(read_file(fs::path(out) / "results.csv").find(",speedup_p90\n"), std::string::npos);
  bool band = false, heat = false;
  for (const auto& entry : fs::directory_iterator(figures)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("speedup-")) {
      band = band || read_file(entry.path()).find("fill-opacity=\"0.2\"") != std::string::npos;
    }
    // The machine's links as a heat map, from the link uses a study's runs record.
    if (name.starts_with("links-")) {
      heat = heat ||
             read_file(entry.path()).find("the busier direction's share") != std::string::npos;
    }
  }
  EXPECT_TRUE(band);
  EXPECT_TRUE(heat);
  // Another seed, other draws: nothing comes from the cache.
  const auto again = run_command(kGpuscale + " sweep " + study_with_seed(2) + " --out " + out);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(results(out)["rows"][1]["iteration_s"], four["iteration_s"]);
}

// The input pipeline's threads as an axis: LeNet on 8 GPUs with NCCL waits for its decode
// threads (128 images of 9.26 ms over 4 threads: 296 ms), so twice the threads halve it.
TEST(CliSweep, DecodeThreadsAreAnAxis) {
  const std::string study = testing::write_temp_file(
      "threads.yaml",
      "name: threads\n"
      "base: {workload: lenet, batch: 16, gpus: 8, comm: nccl_reduce_bcast, images: 25600}\n"
      "axes:\n"
      "  decode_threads: [4, 8]\n");
  const std::string out = out_dir("threads");
  const auto r = run_command(kGpuscale + " sweep " + study + " --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = results(out);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["decode_threads"], 4);
  EXPECT_EQ(j["rows"][1]["decode_threads"], 8);
  EXPECT_NEAR(j["rows"][1]["iteration_s"].get<double>(),
              j["rows"][0]["iteration_s"].get<double>() / 2, 1e-3);
  EXPECT_NE(read_file(fs::path(out) / "results.csv").find(",decode_threads,"), std::string::npos);
  EXPECT_NE(r.out.find("decode_threads"), std::string::npos);  // the varied axis in the table
}

// Spatial parallelism as an axis: the mesh model's 4 samples on 4 GPUs one each, or on 16 GPUs
// four per sample; every output says how many GPUs shared a sample, and a count that cannot
// form groups fails before anything runs.
TEST(CliSweep, SpatialIsAnAxis) {
  const std::string base = "base: {topology: lassen, framework: pytorch-horovod, workload: "
                           "mesh-tangling, comm: nccl, batch: 1, images: 64}\n";
  const std::string study = testing::write_temp_file(
      "spatial.yaml", "name: spatial\n" + base + "runs:\n  - {spatial: 1, gpus: 4}\n"
                                                 "  - {spatial: 4, gpus: 16}\n");
  const std::string out = out_dir("spatial");
  const auto r = run_command(kGpuscale + " sweep " + study + " --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = results(out);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["spatial"], 1);
  EXPECT_EQ(j["rows"][1]["spatial"], 4);
  EXPECT_LT(j["rows"][1]["iteration_s"].get<double>(), j["rows"][0]["iteration_s"].get<double>());
  EXPECT_NE(read_file(fs::path(out) / "results.csv").find(",spatial\n"), std::string::npos);
  const auto table = table_lines(r.out, "spatial");
  ASSERT_EQ(table.size(), 3u) << r.out;
  for (const std::string header : {"spatial", "gpus"}) {
    EXPECT_TRUE(aligned_under(table, header, true)) << header << " in\n" << r.out;
  }
  const std::string bad = testing::write_temp_file(
      "spatial-bad.yaml", "name: spatial-bad\n" + base + "axes:\n  spatial: [4]\n  gpus: [6]\n");
  const auto refused = run_command(kGpuscale + " sweep " + bad + " --out " + out_dir("bad"));
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("6 GPUs cannot form groups of 4"), std::string::npos) << refused.err;
}

// The precision recipe as an axis and as `sweep --precision`: PyTorch's native AMP runs
// ResNet-50 (its input pipeline left out) faster than FP32 and names itself in every row; the
// figures name each series by its recipe; --precision over a study that varies it is refused,
// and a run at --precision hashes apart from the same run at its workload's own precision (no
// cached FP32 result answers for AMP).
TEST(CliSweep, PrecisionIsAnAxisAndAnOption) {
  const std::string base = "base: {workload: resnet-50, framework: pytorch-ddp, batch: 32, gpus: 1, "
                           "comm: nccl, images: 3200, iterations: 2, without: [input]}\n";
  const std::string study = testing::write_temp_file(
      "precision.yaml", "name: precision\n" + base + "axes:\n  precision: [fp32, amp]\n");
  const std::string out = out_dir("precision");
  const std::string plots = out_dir("precision-plots");
  const auto r = run_command(kGpuscale + " sweep " + study + " --out " + out + " --plot " + plots);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = results(out);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["precision"], "fp32");
  EXPECT_EQ(j["rows"][1]["precision"], "amp");
  EXPECT_LT(j["rows"][1]["iteration_s"].get<double>(),
            0.6 * j["rows"][0]["iteration_s"].get<double>());
  EXPECT_FALSE(table_lines(r.out, "precision").empty()) << r.out;

  const auto both = run_command(kGpuscale + " sweep " + study + " --out " + out_dir("both") +
                                " --precision amp");
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("varies the precision itself"), std::string::npos) << both.err;

  const std::string plain = testing::write_temp_file(
      "plain.yaml", "name: plain\n" + base + "runs: [{batch: 32}]\n");
  const std::string plain_out = out_dir("plain");
  ASSERT_EQ(run_command(kGpuscale + " sweep " + plain + " --out " + plain_out).status, 0);
  const auto amp = run_command(kGpuscale + " sweep " + plain + " --out " + plain_out +
                               " --precision amp");
  ASSERT_EQ(amp.status, 0) << amp.err;
  const auto rows = results(plain_out)["rows"];
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["precision"], "amp");
  EXPECT_NEAR(rows[0]["iteration_s"].get<double>(), j["rows"][1]["iteration_s"].get<double>(),
              1e-12);
}

// ResNet-50 at batch 2048 needs far more than a V100's 16 GB: the run is marked in every output.
TEST(CliSweep, RunsThatDoNotFitTheirGpusAreMarked) {
  const std::string study = testing::write_temp_file(
      "too-big.yaml",
      "name: too-big\n"
      "base: {workload: resnet-50, gpus: 1, comm: nccl, images: 25600, without: input}\n"
      "axes:\n"
      "  batch: [16, 2048]\n");
  const std::string out = out_dir("too-big");
  const auto r = run_command(kGpuscale + " sweep " + study + " --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = results(out);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_TRUE(j["rows"][0]["fits_memory"].get<bool>());
  EXPECT_FALSE(j["rows"][1]["fits_memory"].get<bool>());
  const std::string csv = read_file(fs::path(out) / "results.csv");
  EXPECT_NE(csv.find(",fits_memory,"), std::string::npos);
  EXPECT_NE(csv.find(",16,true,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",16,false,"), std::string::npos) << csv;
  EXPECT_NE(r.out.find(" NO\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("1 of 2 runs need more memory than their GPUs have"), std::string::npos);
}

TEST(CliSweep, AResumedStudyRunsNothingTwiceAndAnExtendedOneOnlyItsNewRuns) {
  const std::string study = testing::write_temp_file("resume.yaml", kTinyStudy);
  const std::string out = out_dir("resume");
  const std::string command = kGpuscale + " sweep " + study + " --out " + out;
  const auto first = run_command(command);
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.out.find("8 simulated, 0 cached"), std::string::npos) << first.out;
  const std::string before = read_file(fs::path(out) / "results.json");
  const auto again = run_command(command);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("0 simulated, 8 cached"), std::string::npos) << again.out;
  EXPECT_EQ(read_file(fs::path(out) / "results.json"), before);

  std::string extended = kTinyStudy;
  extended.replace(extended.find("gpus: [1, 2]"), 12, "gpus: [1, 2, 4]");
  testing::write_temp_file("resume.yaml", extended);
  const auto more = run_command(command);
  ASSERT_EQ(more.status, 0) << more.err;
  EXPECT_NE(more.out.find("12 runs (4 simulated, 8 cached)"), std::string::npos) << more.out;
}

TEST(CliSweep, ShardsMergeToTheBytesOfOneSweep) {
  const std::string study = testing::write_temp_file("shards.yaml", kTinyStudy);
  const std::string whole = out_dir("whole");
  ASSERT_EQ(run_command(kGpuscale + " sweep " + study + " --out " + whole).status, 0);
  std::vector<std::string> shard_dirs;
  std::string dirs;
  for (int i = 0; i < 3; ++i) {
    const std::string dir = out_dir("shard" + std::to_string(i));
    shard_dirs.push_back(dir);
    const auto r = run_command(kGpuscale + " sweep " + study + " --out " + dir + " --shard " +
                               std::to_string(i) + "/3");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_LT(results(dir)["rows"].size(), 8u);
    dirs += " " + dir;
  }
  const std::string merged = out_dir("merged");
  const auto m = run_command(kGpuscale + " sweep merge" + dirs + " --out " + merged);
  ASSERT_EQ(m.status, 0) << m.err;
  for (const char* file : {"results.json", "results.csv", "study.yaml"}) {
    EXPECT_EQ(read_file(fs::path(merged) / file), read_file(fs::path(whole) / file)) << file;
  }
  // The merged folder holds every shard's cache: the whole study resumes from it.
  const auto resumed = run_command(kGpuscale + " sweep " + study + " --out " + merged);
  EXPECT_NE(resumed.out.find("0 simulated, 8 cached"), std::string::npos) << resumed.out;

  const auto missing = run_command(kGpuscale + " sweep merge " + shard_dirs[0] + " " + shard_dirs[1] +
                                   " --out " + out_dir("incomplete"));
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("missing"), std::string::npos) << missing.err;
}

TEST(CliSweep, EditingAMachineFileReRunsItsRunsOnly) {
  testing::write_temp_file("edited.yaml", "base: dgx1-v100\nname: edited\n");
  const std::string study = testing::write_temp_file(
      "edit-study.yaml", "name: edit\nbase: {workload: lenet, batch: 16, comm: p2p}\naxes:\n"
                         "  machine: [dgx1-v100, edited.yaml]\n  gpus: [1, 2]\n");
  const std::string out = out_dir("edit");
  const std::string command = kGpuscale + " sweep " + study + " --out " + out;
  ASSERT_EQ(run_command(command).status, 0);
  testing::write_temp_file("edited.yaml", "base: dgx1-v100\nname: edited\n"
                                          "link_kinds: {nvlink: {lane_bandwidth: 50 GB/s}}\n");
  const auto r = run_command(command);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("4 runs (2 simulated, 2 cached)"), std::string::npos) << r.out;
}

TEST(CliSweep, BadStudiesAreOneLineNamingTheLineAndExitTwo) {
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {"name: b\nbase: {workload: lenet, comm: p2p}\naxes:\n  gpu: [1, 2]\n", "bad.yaml:4"},
      {"name: b\nbase: {workload: lenet, comm: p2p}\naxes:\n  machine: [dgx9]\n  gpus: [1]\n",
       "bad.yaml:4: unknown topology 'dgx9'"},
      {"name: b\nbase: {workload: lenet, comm: p2p}\naxes:\n  gpus: [1, 2]\nruns: [{gpus: 4}]\n",
       "not both"},
      {"name: b\nbase: {workload: lenet}\naxes:\n  gpus: [1, 2]\n", "'comm'"},
      {"name: b\nbase: {workload: lenet, comm: p2p}\naxes:\n  gpus: [1, 1]\n", "twice"},
      {"name: b\nbase: {workload: lenet, comm: p2p, topology: c4140-k}\naxes:\n  gpus: [1, 8]\n",
       "bad.yaml:4: 8 GPUs do not fit 'c4140-k'"},
      {"name: b\nbase: {workload: lenet, comm: p2p}\n", "needs 'axes:'"},
  };
  for (const Case& c : cases) {
    const std::string study = testing::write_temp_file("bad.yaml", c.text);
    const std::string out = out_dir("bad");
    const auto r = run_command(kGpuscale + " sweep " + study + " --out " + out);
    EXPECT_EQ(r.status, 2) << c.text;
    EXPECT_TRUE(r.out.empty()) << r.out;
    // Progress lines ("[1/2] simulated ...") may come first; the error is one line.
    std::string error = r.err;
    while (error.starts_with("[")) error.erase(0, error.find('\n') + 1);
    EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 1) << r.err;
    EXPECT_NE(error.find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(fs::path(out) / "results.json"));
  }
}

TEST(CliSweep, AGpuCountAMachineCannotHoldFailsAtItsLineBeforeAnyRunIsSimulated) {
  const std::string study = testing::write_temp_file(
      "too-many.yaml", "name: b\nbase: {workload: lenet, comm: p2p, batch: 16, iterations: 2}\n"
                       "axes:\n  machine: [c4140-k]\n  gpus: [1, 8]\n");
  const std::string out = out_dir("too-many");
  const auto r = run_command(kGpuscale + " sweep " + study + " --out " + out + " --jobs 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, study + ":5: 8 GPUs do not fit 'c4140-k': it has 4 GPUs, so use 1 to 4\n");
  // The 1-GPU run was not simulated (nor cached) first.
  EXPECT_FALSE(fs::exists(fs::path(out) / "runs"));
}

}  // namespace
}  // namespace gpuscale
