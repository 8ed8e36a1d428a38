// `gpuscale serve`'s JSON API without HTTP (tools/serve/serve_api.hpp): a run answers what
// `gpuscale run --format json` prints for the same configuration, bad requests are one-line
// errors naming the request's key, and a run past its time is ended.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"
#include "tools/serve/serve_api.hpp"

namespace gpuscale::serve {
namespace {

using gpuscale::testing::config_error_of;

TEST(ServeApi, TheCatalogOpensOnTheDefaultStudysResNet50OnTheDgx1) {
  const auto c = catalog(Limits{});
  EXPECT_EQ(c["defaults"]["machine"], "dgx1-v100");
  EXPECT_EQ(c["defaults"]["workload"], "resnet-50");
  EXPECT_EQ(c["defaults"]["framework"], "mxnet");
  EXPECT_EQ(c["defaults"]["comm"], "p2p");
  EXPECT_EQ(c["defaults"]["batch"], 16);
  EXPECT_EQ(c["defaults"]["gpus"], nlohmann::json::parse("[1, 2, 4, 8]"));
  auto has = [&](const char* list, const std::string& name) {
    for (const auto& entry : c[list]) {
      if ((entry.is_string() ? entry.get<std::string>() : entry["name"].get<std::string>()) == name)
        return true;
    }
    return false;
  };
  EXPECT_TRUE(has("machines", "lassen"));
  EXPECT_TRUE(has("workloads", "lenet"));
  EXPECT_TRUE(has("frameworks", "pytorch-ddp"));
  EXPECT_TRUE(has("comms", "nccl_tree"));
  EXPECT_TRUE(has("precisions", "fp32"));
  EXPECT_TRUE(has("transformers", "gpt3-175b"));
  EXPECT_FALSE(has("transformers", "resnet-50"));
  EXPECT_EQ(c["train_defaults"]["machine"], "dgx-h200-superpod");
}

TEST(ServeApi, AMachineGivesItsLinkKindsAsTheFileWritesThem) {
  const auto m = machine("dgx1-v100");
  EXPECT_EQ(m["gpus"], 8);
  EXPECT_DOUBLE_EQ(m["link_kinds"]["nvlink"]["lane_bandwidth_GBps"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(m["link_kinds"]["nvlink"]["latency_us"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(m["link_kinds"]["nvlink"]["efficiency"].get<double>(), 0.96);
  EXPECT_EQ(m["links"].size(), 33u);  // as `--set links.N` numbers them: the file's order
  EXPECT_EQ(m["links"][2]["a"], "gpu0");
  EXPECT_EQ(m["links"][2]["b"], "gpu3");
  EXPECT_EQ(m["links"][2]["lanes"], 2);
  EXPECT_EQ(m["svg"].get<std::string>().rfind("<svg", 0), 0u);
  EXPECT_NE(config_error_of([] { machine("../CMakeLists"); }).find("no shipped machine"),
            std::string::npos);
}

TEST(ServeApi, ARunAnswersWhatRunFormatJsonPrints) {
  // As the page sends it: no link changed, none taken away or added.
  const auto answer = run(R"({"machine": "dgx1-v100", "workload": "lenet", "framework": "mxnet",
                              "comm": "p2p", "gpus": [1, 4], "batch": 16, "images": 256000,
                              "without": ["input"], "set": [], "links": []})",
                          Limits{});
  const auto cli = gpuscale::testing::run_command(
      std::string(GPUSCALE_EXECUTABLE) +
      " run --topology dgx1-v100 --workload lenet --framework mxnet --comm p2p --gpus 1,4 "
      "--batch 16 --images 256000 --without input --format json");
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_EQ(answer["results"], nlohmann::ordered_json::parse(cli.out)["results"]);
  EXPECT_NE(answer["timeline_svg"].get<std::string>().find("lenet p2p 4 GPUs"),
            std::string::npos);
  const std::string machine_svg = answer["machine_svg"].get<std::string>();
  EXPECT_NE(machine_svg.find("link utilisation"), std::string::npos);
  // A heat map, from the run's link uses (recorded for the page, Experiment::record_link_uses).
  EXPECT_NE(machine_svg.find("the busier direction's share"), std::string::npos);
}

// Twice the NVLink bandwidth: NCCL's exchange gets faster (docs/tutorial.md, section 4), and
// the 1-GPU run, which crosses no link, stays as it was.
TEST(ServeApi, AWhatIfLinkChangesTheRunTheWayItShould) {
  const std::string base = R"({"machine": "dgx1-v100", "workload": "lenet", "framework": "mxnet",
                               "comm": "nccl_reduce_bcast", "gpus": [1, 8], "batch": 16,
                               "without": ["input"])";
  const auto shipped = run(base + "}", Limits{});
  const auto faster =
      run(base + R"(, "set": ["link_kinds.nvlink.lane_bandwidth=50 GB/s"]})", Limits{});
  EXPECT_EQ(faster["results"][0]["iteration_s"], shipped["results"][0]["iteration_s"]);
  EXPECT_LT(faster["results"][1]["wu_s"].get<double>(),
            shipped["results"][1]["wu_s"].get<double>());
}

// A link taken away: gpu0 and gpu1 share no NVLink, so MXNet's P2P copies between them go
// through the host and the exchange takes longer; the answer is the CLI's for a `base:` file
// with the same `links:` entries, and the machine pictured is the changed one.
TEST(ServeApi, ALinkTakenAwayIsTheBaseFilesRemoval) {
  const std::string base = R"({"machine": "dgx1-v100", "workload": "lenet", "framework": "mxnet",
                               "comm": "p2p", "gpus": [8], "batch": 16, "images": 256000,
                               "without": ["input"])";
  const auto shipped = run(base + "}", Limits{});
  const auto without =
      run(base + R"(, "links": [{"a": "gpu1", "b": "gpu0", "remove": true}]})", Limits{});
  EXPECT_GT(without["results"][0]["wu_s"].get<double>(),
            shipped["results"][0]["wu_s"].get<double>());
  const std::string file = gpuscale::testing::write_temp_file(
      "without-gpu0-gpu1.yaml", "base: dgx1-v100\nlinks:\n  - {a: gpu0, b: gpu1, remove: true}\n");
  const auto cli = gpuscale::testing::run_command(
      std::string(GPUSCALE_EXECUTABLE) + " run --topology " + file +
      " --workload lenet --framework mxnet --comm p2p --gpus 8 --batch 16 --images 256000"
      " --without input --format json");
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_EQ(without["results"][0]["iteration_s"],
            nlohmann::ordered_json::parse(cli.out)["results"][0]["iteration_s"]);
  EXPECT_EQ(without["machine_svg"].get<std::string>().find("gpu0-gpu1"), std::string::npos);
  EXPECT_NE(shipped["machine_svg"].get<std::string>().find("gpu0-gpu1"), std::string::npos);
}

// Error bars (docs/variability.md): a spread on each GPU's kernels, sampled, is the CLI's run of
// a machine file with that `variability:` section, and 8 GPUs waiting for the slowest lose
// speedup against the deterministic run.
TEST(ServeApi, ASampledRunWithASpreadIsTheClisAndWaitsForTheSlowest) {
  const std::string base = R"({"machine": "dgx1-v100", "workload": "resnet-50",
                               "framework": "pytorch-ddp", "comm": "nccl", "gpus": [1, 8],
                               "batch": 16, "images": 256000, "without": ["input"])";
  const auto deterministic = run(base + "}", Limits{});
  const auto sampled = run(base + R"(, "samples": 8, "seed": 3, "variability": {"compute":
                               {"distribution": "normal", "cv": 0.05, "source": "a what-if"}}})",
                           Limits{});
  const std::string file = gpuscale::testing::write_temp_file(
      "noisy-dgx1.yaml", "base: dgx1-v100\nvariability:\n  compute: {distribution: normal, "
                         "cv: 0.05, source: \"a what-if\"}\n");
  const auto cli = gpuscale::testing::run_command(
      std::string(GPUSCALE_EXECUTABLE) + " run --topology " + file +
      " --workload resnet-50 --framework pytorch-ddp --comm nccl --gpus 1,8 --batch 16"
      " --images 256000 --without input --samples 8 --seed 3 --format json");
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_EQ(sampled["results"], nlohmann::ordered_json::parse(cli.out)["results"]);
  EXPECT_EQ(sampled["results"][1]["samples"], 8);
  EXPECT_LT(sampled["results"][1]["speedup_p50"].get<double>(),
            deterministic["results"][1]["speedup"].get<double>());
}

TEST(ServeApi, BadLinksAreOneLineErrorsNamingTheEntry) {
  auto error_of = [](const std::string& links) {
    return config_error_of([&] {
      run(R"({"machine": "dgx1-v100", "comm": "p2p", "gpus": [2], "batch": 16, "links": )" +
              links + "}",
          Limits{});
    });
  };
  for (const auto& [links, expected] :
       {std::pair{R"([{"a": "gpu0", "b": "gpu1", "remove": true},
                      {"a": "gpu0", "b": "gpu99", "kind": "nvlink", "lanes": 1}])",
                  "request.links:2: link gpu0-gpu99: unknown endpoint 'gpu99'"},
        std::pair{R"([{"a": "gpu0", "b": "gpu5", "remove": true}])",
                  "request.links:1: no link gpu0-gpu5 in the base to remove"},
        std::pair{R"([{"a": "gpu0", "b": "gpu5", "kind": "nvlink", "lanes": 1}])",
                  "device gpu0 has 7 nvlink lanes in its links but 6 in its ports"},
        std::pair{R"([{"a": "gpu0", "b": "gpu1", "lane_bandwidth": "-5 GB/s"}])",
                  "request.links:1: lane_bandwidth of link gpu0-gpu1"},
        std::pair{R"([3])", "request.links: 3 is no link"},
        std::pair{R"({"a": "gpu0"})", "request.links: must be a list"}}) {
    const std::string message = error_of(links);
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(ServeApi, BadSpreadsAndSamplesAreOneLineErrorsNamingTheKey) {
  const std::string base = R"({"machine": "dgx1-v100", "comm": "p2p", "gpus": [2], "batch": 16)";
  for (const auto& [rest, expected] :
       {std::pair{R"("samples": 4, "variability": {"compute": {"distribution": "normal",
                     "cv": 5, "source": "x"}})",
                  "request.variability:1: cv of variability.compute is 5, outside 0..0.3"},
        std::pair{R"("samples": 4, "variability": {"gpu": {}})",
                  "request.variability:1: unknown key 'gpu' in variability"},
        std::pair{R"("variability": [1])", "request.variability: must be an object"},
        std::pair{R"("samples": 1000)", "request.samples: 1000 is not a whole number from 0 to 64"},
        std::pair{R"("seed": 3)", "request.seed: only matters with samples"}}) {
    const std::string message =
        config_error_of([&] { run(base + ", " + rest + "}", Limits{}); });
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// Every layout `gpuscale train --sweep` finds, in its order and with its numbers (but the host
// time each took to simulate), and a machine changed on the page changes the layouts' machine.
TEST(ServeApi, LayoutsAreTrainSweepsAndTheirMachineCanChange) {
  const std::string base = R"({"machine": "dgx-h200-superpod", "workload": "gpt3-175b",
                               "gpus": 512, "tp": [4, 8], "pp": [8, 16])";
  const auto answer = train(base + "}", Limits{});
  const auto cli = gpuscale::testing::run_command(
      std::string(GPUSCALE_EXECUTABLE) +
      " train --topology dgx-h200-superpod --workload gpt3-175b --sweep --gpus 512 --tp 4,8"
      " --pp 8,16 --format json");
  ASSERT_EQ(cli.status, 0) << cli.err;
  auto expected = nlohmann::json::parse(cli.out)["layouts"];
  auto layouts = nlohmann::json::parse(answer.dump())["layouts"];
  ASSERT_EQ(layouts.size(), expected.size());
  ASSERT_GE(layouts.size(), 3u);
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    layouts[i].erase("wall_s");
    expected[i].erase("wall_s");
    EXPECT_EQ(layouts[i], expected[i]) << i;
  }
  // Half the NVLink bandwidth inside each node slows every layout's tensor-parallel allreduces.
  const auto slower =
      train(base + R"(, "set": ["link_kinds.nvlink.lane_bandwidth=12.5 GB/s"]})", Limits{});
  std::size_t compared = 0;
  for (const auto& layout : slower["layouts"]) {
    for (const auto& shipped : answer["layouts"]) {
      if (shipped["tp"] == layout["tp"] && shipped["pp"] == layout["pp"]) {
        EXPECT_GT(layout["tp_comm_s"].get<double>(), shipped["tp_comm_s"].get<double>());
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, layouts.size());
}

TEST(ServeApi, BadLayoutsAreOneLineErrors) {
  for (const auto& [body, expected] :
       {std::pair{R"({"machine": "dgx-h200-superpod", "workload": "resnet-50", "gpus": 8})",
                  "no attention layer"},
        std::pair{R"({"machine": "dgx-h200-superpod", "gpus": 8, "recompute": "most"})",
                  "request.recompute: 'most' is no recomputation"},
        std::pair{R"({"machine": "dgx-h200-superpod", "gpus": 8, "tp": []})",
                  "request.tp: must be a list of 1 to 16 numbers"},
        std::pair{R"({"machine": "dgx-h200-superpod", "gpus": 8, "zero1": "yes"})",
                  "request.zero1: must be true or false"},
        std::pair{R"({"machine": "dgx-h200-superpod"})", "request.gpus: missing"},
        std::pair{R"({"machine": "dgx-h200-superpod", "gpus": 8, "batch": 4})",
                  "request.batch: unknown key"}}) {
    const std::string message = config_error_of([&] { train(body, Limits{}); });
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(ServeApi, BadRequestsAreOneLineErrorsNamingTheKey) {
  const Limits limits;
  auto error_of = [&](const std::string& body) {
    return config_error_of([&] { run(body, limits); });
  };
  const std::string rest = R"("comm": "p2p", "gpus": [1, 2], "batch": 16)";
  EXPECT_NE(error_of(R"({"machine": "dgx-9000", )" + rest + "}").find(
                "request.machine: 'dgx-9000' is no shipped topology"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"machine": "/etc/passwd", )" + rest + "}").find("no shipped"),
            std::string::npos);
  const std::string negative =
      error_of(R"({"machine": "dgx1-v100", "set": ["link_kinds.nvlink.lane_bandwidth=-25 GB/s"], )" +
               rest + "}");
  // The machine loader's message, at the change's entry: request.set:N.
  EXPECT_NE(negative.find("request.set:1: lane_bandwidth of link kind 'nvlink'"),
            std::string::npos)
      << negative;
  EXPECT_NE(negative.find("is negative"), std::string::npos) << negative;
  EXPECT_NE(error_of(R"({"machine": "dgx1-v100", "comm": "p2p", "gpus": [1000000], "batch": 16})")
                .find("request.gpus: 1000000 is not a whole number from 1 to 4096"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"machine": "dgx1-v100", "without": ["gpu"], )" + rest + "}")
                .find("request.without: 'gpu' is no mechanism"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"machine": "dgx1-v100", "colour": "red", )" + rest + "}")
                .find("request.colour: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"machine": "dgx1-v100", )").find("request: not JSON"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"machine": "dgx1-v100", "gpus": [1], "batch": 16})")
                .find("request.comm: missing"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(limits.max_request_bytes + 1, ' ')).find("more than the"),
            std::string::npos);
  for (const std::string& message :
       {error_of(R"({"machine": "dgx1-v100", "comm": "p2p", "gpus": [1], "batch": -1})"),
        negative}) {
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(ServeApi, ARunPastItsTimeIsEndedAndReported) {
  Limits limits;
  limits.max_run_seconds = 0.2;
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(run(R"({"machine": "dgx1-v100", "workload": "resnet-50", "comm": "p2p",
                       "gpus": [1, 2, 4, 8], "batch": 16})",
                   limits),
               RunTooLong);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

}  // namespace
}  // namespace gpuscale::serve
