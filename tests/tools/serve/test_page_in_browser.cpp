// The page in a real browser: Debian's chromium, headless, against `gpuscale serve` on a free
// port. The default study's case on screen is what `gpuscale run --format json` prints for it,
// a faster link moves the result the right way, links changed, taken away or added, sampled
// runs and layouts are the CLI's, and the screenshots docs/tutorial.md shows are taken here.
// Without chromium the tests skip, unless GPUSCALE_REQUIRE_BROWSER is set (CI sets it, and
// installs chromium).
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "tests/support/test_support.hpp"
#include "tools/serve/http_server.hpp"

namespace gpuscale::serve {
namespace {

using gpuscale::testing::run_command;

std::string chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

// Per GPU count, each result cell's key and the exact number the page holds for it.
using Cells = std::map<int, std::map<std::string, double>>;

Cells cells_of(const std::string& dom) {
  Cells cells;
  const std::regex row(R"re(<tr data-gpus="(\d+)">(.*?)</tr>)re");
  const std::regex cell(R"re(data-key="([a-z0-9_]+)" data-value="([^"]*)")re");
  for (auto r = std::sregex_iterator(dom.begin(), dom.end(), row); r != std::sregex_iterator();
       ++r) {
    const std::string inside = (*r)[2];
    for (auto c = std::sregex_iterator(inside.begin(), inside.end(), cell);
         c != std::sregex_iterator(); ++c) {
      cells[std::stoi((*r)[1])][(*c)[1]] = nlohmann::json::parse((*c)[2].str()).get<double>();
    }
  }
  return cells;
}

class PageInBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (chromium().empty()) {
      if (std::getenv("GPUSCALE_REQUIRE_BROWSER") != nullptr) FAIL() << "no chromium";
      GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
    }
    server_ = std::make_unique<HttpServer>(Limits{});
    port_ = server_->bind("127.0.0.1", 0);
    thread_ = std::thread([this] { server_->serve(); });
    httplib::Client client("127.0.0.1", port_);
    for (int tries = 0; tries < 100 && !client.Get("/api/catalog"); ++tries)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  void TearDown() override {
    if (!server_) return;
    server_->stop();
    thread_.join();
  }

  // Chromium, headless, on the page with `query`; its virtual clock waits for the page's own
  // requests, so what it prints or pictures is the page after its run.
  std::string browse(const std::string& query, const std::string& what) const {
    const auto out = run_command(
        chromium() +
        " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars"
        " --window-size=1400,2200 --virtual-time-budget=120000 " + what + " 'http://127.0.0.1:" +
        std::to_string(port_) + "/" + query + "'");
    EXPECT_EQ(out.status, 0) << out.err;
    return out.out;
  }

  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(PageInBrowser, OpensOnTheDefaultStudysCaseWithTheNumbersRunPrints) {
  const std::string dom = browse("", "--dump-dom");
  ASSERT_NE(dom.find("data-state=\"done\""), std::string::npos) << dom.substr(0, 2000);
  const Cells cells = cells_of(dom);
  const auto cli = run_command(std::string(GPUSCALE_EXECUTABLE) +
                               " run --topology dgx1-v100 --workload resnet-50 --framework mxnet"
                               " --comm p2p --gpus 1,2,4,8 --batch 16 --images 256000"
                               " --format json");
  ASSERT_EQ(cli.status, 0) << cli.err;
  const auto results = nlohmann::json::parse(cli.out)["results"];
  ASSERT_EQ(cells.size(), results.size());
  for (const auto& row : results) {
    const auto& shown = cells.at(row["gpus"].get<int>());
    for (const char* key : {"iteration_s", "fpbp_s", "wu_s", "speedup", "epoch_s",
                            "memory_gpu0_gb", "max_link_utilisation"}) {
      EXPECT_EQ(shown.at(key), row[key].get<double>()) << key << " at " << row["gpus"];
    }
  }
}

// The tutorial's what-if (docs/tutorial.md, section 4): LeNet's P2P copies on 8 GPUs, with NVLink
// lanes of 50 GB/s instead of 25.
TEST_F(PageInBrowser, TwiceTheNvlinkBandwidthMakesP2pFaster) {
  const std::string lenet = "?workload=lenet&comm=p2p&gpus=8&without=input";
  const Cells shipped = cells_of(browse(lenet, "--dump-dom"));
  const Cells faster = cells_of(
      browse(lenet + "&set=link_kinds.nvlink.lane_bandwidth%3D50%20GB%2Fs", "--dump-dom"));
  ASSERT_EQ(shipped.count(8), 1u);
  ASSERT_EQ(faster.count(8), 1u);
  EXPECT_LT(faster.at(8).at("iteration_s"), shipped.at(8).at("iteration_s"));
  EXPECT_LT(faster.at(8).at("wu_s"), shipped.at(8).at("wu_s"));
}

// One link changed on the page is the CLI's `--set links.N.FIELD`: gpu0-gpu1's NVLink (the
// DGX-1's link 0) at 50 GB/s a lane.
TEST_F(PageInBrowser, OneLinkChangedIsTheClisSetOfThatLink) {
  const Cells page = cells_of(browse("?workload=lenet&comm=p2p&gpus=8&without=input"
                                     "&set=links.0.lane_bandwidth%3D50%20GB%2Fs",
                                     "--dump-dom"));
  const auto cli = run_command(std::string(GPUSCALE_EXECUTABLE) +
                               " run --topology dgx1-v100 --workload lenet --framework mxnet"
                               " --comm p2p --gpus 8 --batch 16 --images 256000 --without input"
                               " --set 'links.0.lane_bandwidth=50 GB/s' --format json");
  ASSERT_EQ(cli.status, 0) << cli.err;
  ASSERT_EQ(page.count(8), 1u);
  EXPECT_EQ(page.at(8).at("iteration_s"),
            nlohmann::json::parse(cli.out)["results"][0]["iteration_s"].get<double>());
}

// Links taken away and added on the page are a `base:` file's `links:` entries: the DGX-1
// rewired, gpu0-gpu1 and gpu4-gpu5 traded for gpu0-gpu5 and gpu1-gpu4 (each GPU keeps its six
// NVLink ports).
TEST_F(PageInBrowser, LinksTakenAwayAndAddedAreTheBaseFilesLinks) {
  const std::string dom =
      browse("?workload=lenet&comm=p2p&gpus=8&without=input&remove=gpu0,gpu1&remove=gpu4,gpu5"
             "&add=gpu0,gpu5,nvlink,1&add=gpu1,gpu4,nvlink,1",
             "--dump-dom");
  ASSERT_NE(dom.find("data-state=\"done\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("without gpu0–gpu1"), std::string::npos);
  const Cells page = cells_of(dom);
  const std::string file = gpuscale::testing::write_temp_file("rewired.yaml", R"(base: dgx1-v100
links:
  - {a: gpu0, b: gpu1, remove: true}
  - {a: gpu4, b: gpu5, remove: true}
  - {a: gpu0, b: gpu5, kind: nvlink, lanes: 1}
  - {a: gpu1, b: gpu4, kind: nvlink, lanes: 1}
)");
  const auto cli = run_command(std::string(GPUSCALE_EXECUTABLE) + " run --topology " + file +
                               " --workload lenet --framework mxnet --comm p2p --gpus 8"
                               " --batch 16 --images 256000 --without input --format json");
  ASSERT_EQ(cli.status, 0) << cli.err;
  ASSERT_EQ(page.count(8), 1u);
  EXPECT_EQ(page.at(8).at("iteration_s"),
            nlohmann::json::parse(cli.out)["results"][0]["iteration_s"].get<double>());
}

// The error-bars lesson's run (a 5% spread on each GPU's kernels, 32 samples): the page shows
// the percentiles `gpuscale run --samples` prints.
TEST_F(PageInBrowser, ASampledRunShowsThePercentilesRunPrints) {
  const Cells page = cells_of(browse("?workload=resnet-50&framework=pytorch-ddp&comm=nccl"
                                     "&gpus=1,8&without=input&compute_cv=0.05&samples=32",
                                     "--dump-dom"));
  const std::string file = gpuscale::testing::write_temp_file(
      "spread.yaml", "base: dgx1-v100\nvariability:\n  compute: {distribution: normal, cv: 0.05, "
                     "source: \"a what-if on gpuscale serve's page\"}\n");
  const auto cli = run_command(std::string(GPUSCALE_EXECUTABLE) + " run --topology " + file +
                               " --workload resnet-50 --framework pytorch-ddp --comm nccl"
                               " --gpus 1,8 --batch 16 --images 256000 --without input"
                               " --samples 32 --format json");
  ASSERT_EQ(cli.status, 0) << cli.err;
  const auto results = nlohmann::json::parse(cli.out)["results"];
  ASSERT_EQ(page.count(8), 1u);
  for (const char* key : {"iteration_s", "iteration_p10_s", "iteration_p90_s", "speedup_p10",
                          "speedup_p90"}) {
    EXPECT_EQ(page.at(8).at(key), results[1][key].get<double>()) << key;
  }
}

// The machine file the page offers (its download, shown under the links) is the run's machine:
// the CLI on that file gives the page's numbers, link kinds, links and spreads changed.
TEST_F(PageInBrowser, ItsMachineFileIsTheMachineItRan) {
  const std::string dom = browse(
      "?workload=lenet&comm=p2p&gpus=8&without=input&compute_cv=0.05&samples=8"
      "&set=link_kinds.pcie.lane_bandwidth%3D1.97%20GB%2Fs&set=links.2.lanes%3D1"
      "&remove=gpu0,gpu1&remove=gpu4,gpu5&add=gpu0,gpu5,nvlink,1&add=gpu1,gpu4,nvlink,1",
      "--dump-dom");
  ASSERT_NE(dom.find("data-state=\"done\""), std::string::npos) << dom.substr(0, 2000);
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(dom, m, std::regex(R"re(<pre id="machine-file">([^<]*)</pre>)re")));
  std::string yaml = m[1];
  for (const auto& [entity, text] : {std::pair{"&quot;", "\""}, std::pair{"&gt;", ">"},
                                     std::pair{"&lt;", "<"}, std::pair{"&amp;", "&"}}) {
    for (std::size_t at; (at = yaml.find(entity)) != std::string::npos;)
      yaml.replace(at, std::string(entity).size(), text);
  }
  EXPECT_NE(yaml.find("remove: true"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("variability:"), std::string::npos) << yaml;
  const std::string file = gpuscale::testing::write_temp_file("dgx1-v100-what-if.yaml", yaml);
  const auto cli = run_command(std::string(GPUSCALE_EXECUTABLE) + " run --topology " + file +
                               " --workload lenet --framework mxnet --comm p2p --gpus 8"
                               " --batch 16 --images 256000 --without input --samples 8"
                               " --format json");
  ASSERT_EQ(cli.status, 0) << cli.err << yaml;
  const Cells page = cells_of(dom);
  ASSERT_EQ(page.count(8), 1u);
  EXPECT_EQ(page.at(8).at("iteration_s"),
            nlohmann::json::parse(cli.out)["results"][0]["iteration_s"].get<double>());
}

// The layouts' panel: `gpuscale train --sweep`'s layouts, fastest first, with its iteration times.
TEST_F(PageInBrowser, LayoutsAreTheOnesTrainSweepFinds) {
  const std::string dom = browse("?machine=dgx-h200-superpod&workload=resnet-50"
                                 "&framework=pytorch-ddp&comm=nccl&gpus=8"
                                 "&train&train_gpus=512&train_tp=4,8",
                                 "--dump-dom");
  ASSERT_NE(dom.find("data-train-state=\"done\""), std::string::npos) << dom.substr(0, 2000);
  const auto cli = run_command(std::string(GPUSCALE_EXECUTABLE) +
                               " train --topology dgx-h200-superpod --workload gpt3-175b --sweep"
                               " --gpus 512 --tp 4,8 --format json");
  ASSERT_EQ(cli.status, 0) << cli.err;
  const auto layouts = nlohmann::json::parse(cli.out)["layouts"];
  const std::regex row(
      R"re(<tr data-layout="(\d+)x(\d+)x(\d+)">.*?data-key="iteration_s" data-value="([^"]*)")re");
  std::size_t i = 0;
  for (auto m = std::sregex_iterator(dom.begin(), dom.end(), row); m != std::sregex_iterator();
       ++m, ++i) {
    ASSERT_LT(i, layouts.size());
    EXPECT_EQ(std::stoi((*m)[1]), layouts[i]["tp"].get<int>()) << i;
    EXPECT_EQ(std::stoi((*m)[2]), layouts[i]["pp"].get<int>()) << i;
    EXPECT_EQ(nlohmann::json::parse((*m)[4].str()).get<double>(),
              layouts[i]["iteration_s"].get<double>())
        << i;
  }
  EXPECT_EQ(i, layouts.size());
}

// docs/tutorial.md's and docs/serve.md's pictures of the page (docs/figures/serve-*.png),
// written where GPUSCALE_SCREENSHOT_DIR says, else beside the test's other files.
TEST_F(PageInBrowser, TakesTheTutorialsScreenshots) {
  const char* dir = std::getenv("GPUSCALE_SCREENSHOT_DIR");
  const std::string folder = dir != nullptr ? dir : GPUSCALE_TEST_TMPDIR;
  std::filesystem::create_directories(folder);
  for (const auto& [name, query] :
       {std::pair{"serve-default.png", ""},
        std::pair{"serve-what-if.png",
                  "?workload=lenet&comm=p2p&without=input"
                  "&set=link_kinds.pcie.lane_bandwidth%3D1.97%20GB%2Fs"},
        std::pair{"serve-layouts.png",
                  "?machine=dgx-h200-superpod&workload=resnet-50&framework=pytorch-ddp"
                  "&comm=nccl&gpus=8,64,512&train&train_gpus=1024"}}) {
    const std::string path = folder + "/" + name;
    std::filesystem::remove(path);
    browse(query, "--screenshot='" + path + "'");
    EXPECT_GT(std::filesystem::exists(path) ? std::filesystem::file_size(path) : 0u, 10000u)
        << path;
  }
}

}  // namespace
}  // namespace gpuscale::serve
