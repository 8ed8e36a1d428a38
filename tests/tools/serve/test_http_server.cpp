// `gpuscale serve` over HTTP (tools/serve/http_server.hpp), on a free port of 127.0.0.1: the
// page's files, the API's answers and its error statuses, and no file outside the data tree.
#include <gtest/gtest.h>
#include <httplib.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "tools/serve/http_server.hpp"

namespace gpuscale::serve {
namespace {

// A server with `limits` answering on a free port of 127.0.0.1 from its own thread, and a
// client of it, once it answers; stopped when it goes.
struct ServingOnAFreePort {
  explicit ServingOnAFreePort(const Limits& limits)
      : server(limits), port(server.bind("127.0.0.1", 0)),
        serving([this] { server.serve(); }), client("127.0.0.1", port) {
    client.set_read_timeout(120);
    for (int tries = 0; tries < 100 && !client.Get("/api/catalog"); ++tries)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ~ServingOnAFreePort() {
    server.stop();
    serving.join();
  }

  HttpServer server;  // forks its answering processes, children of the constructing thread
  int port;
  std::thread serving;
  httplib::Client client;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    limits_.max_request_bytes = 4096;
    served_ = std::make_unique<ServingOnAFreePort>(limits_);
    client_ = &served_->client;
  }

  Limits limits_;
  std::unique_ptr<ServingOnAFreePort> served_;
  httplib::Client* client_ = nullptr;
};

TEST_F(HttpServerTest, ServesThePageItsScriptAndItsStyle) {
  for (const auto& [path, type, text] :
       {std::tuple{"/", "text/html", "<script src=\"/app.js\">"},
        std::tuple{"/app.js", "text/javascript", "/api/run"},
        std::tuple{"/style.css", "text/css", "font-family"},
        std::tuple{"/docs/tutorial.md", "text/html",
                   "id=\"4-a-what-if-machine-of-your-own-15-minutes\""},
        std::tuple{"/docs/figures/serve-default.png", "image/png", "PNG"}}) {
    const auto res = client_->Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path;
    EXPECT_EQ(res->get_header_value("Content-Type").rfind(type, 0), 0u) << path;
    EXPECT_NE(res->body.find(text), std::string::npos) << path;
  }
}

TEST_F(HttpServerTest, AnswersTheApiAndItsErrorsAsJson) {
  const auto catalog = client_->Get("/api/catalog");
  ASSERT_TRUE(catalog);
  EXPECT_EQ(catalog->status, 200);
  EXPECT_EQ(nlohmann::json::parse(catalog->body)["defaults"]["machine"], "dgx1-v100");

  const auto machine = client_->Get("/api/machine?name=lassen");
  ASSERT_TRUE(machine);
  EXPECT_EQ(machine->status, 200);
  EXPECT_TRUE(nlohmann::json::parse(machine->body)["link_kinds"].contains("infiniband"));

  const auto ran = client_->Post(
      "/api/run",
      R"({"machine": "dgx1-v100", "workload": "lenet", "comm": "p2p", "gpus": [1, 2], "batch": 16})",
      "application/json");
  ASSERT_TRUE(ran);
  EXPECT_EQ(ran->status, 200) << ran->body;
  EXPECT_EQ(nlohmann::json::parse(ran->body)["results"].size(), 2u);

  const auto laid_out = client_->Post(
      "/api/train", R"({"machine": "dgx-h200-superpod", "gpus": 64, "tp": [8], "pp": [8]})",
      "application/json");
  ASSERT_TRUE(laid_out);
  EXPECT_EQ(laid_out->status, 200) << laid_out->body;
  EXPECT_EQ(nlohmann::json::parse(laid_out->body)["layouts"].size(), 1u);

  const auto bad = client_->Post(
      "/api/run", R"({"machine": "dgx1-v100", "comm": "p2p", "gpus": [1000000], "batch": 16})",
      "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(nlohmann::json::parse(bad->body)["error"].get<std::string>().find("request.gpus"),
            std::string::npos);
}

TEST_F(HttpServerTest, RefusesWhatItDoesNotServe) {
  const auto oversized =
      client_->Post("/api/run", std::string(limits_.max_request_bytes + 1, ' '), "text/plain");
  ASSERT_TRUE(oversized);
  EXPECT_EQ(oversized->status, 413);
  for (const char* path : {"/nowhere", "/docs/../CMakeLists.txt", "/docs/secret.md",
                           "/../../etc/passwd", "/api/machine?name=../../etc/passwd"}) {
    const auto res = client_->Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_TRUE(res->status == 404 || res->status == 400) << path << ": " << res->status;
    EXPECT_EQ(res->body.find("root:"), std::string::npos) << path;
    EXPECT_TRUE(nlohmann::json::parse(res->body).contains("error")) << path;
  }
}

// No request makes the server read a file of its choosing: a path set where the machine takes a
// file (a cluster's node, a GPU model) is refused, unlooked at, and so is a request nested too
// deep to be one.
TEST_F(HttpServerTest, ReadsNoFileARequestNames) {
  const std::string deep = R"({"machine": "dgx1-v100", "comm": "nccl", "gpus": [2], "batch": 16,
                               "links": [{"a": )" +
                           std::string(20, '[') + R"("gpu0")" + std::string(20, ']') + "}]}";
  const std::string outside = "outside gpuscale's data tree";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"machine": "lassen", "comm": "nccl", "gpus": [8], "batch": 16,
           "set": ["cluster.node=/etc/passwd"]})",
       outside},
      {R"({"machine": "dgx1-v100", "comm": "nccl", "gpus": [2], "batch": 16,
           "set": ["gpus.model=/etc/hostname"]})",
       outside},
      {R"({"machine": "dgx1-v100", "comm": "nccl", "gpus": [2], "batch": 16,
           "set": ["gpus.model=../../../../../../etc/hostname"]})",
       outside},
      {deep, "nested more than 16 deep"}};
  for (const auto& [body, expected] : cases) {
    const auto res = client_->Post("/api/run", body, "application/json");
    ASSERT_TRUE(res) << body;
    EXPECT_EQ(res->status, 400) << res->body;
    EXPECT_NE(nlohmann::json::parse(res->body)["error"].get<std::string>().find(expected),
              std::string::npos)
        << res->body;
    EXPECT_EQ(res->body.find("root:"), std::string::npos) << res->body;
  }
}

// A class shares the server: one long run holds one of its processes, and another run is answered
// meanwhile. The long one (GPT-3 175B on 512 to 4,096 GPUs of the SuperPOD, 32 sampled
// iterations each: over a minute) is ended at the limit, 8 s; LeNet on 1 and 2 GPUs takes a
// fraction of a second.
TEST(HttpServerShared, AnswersARunWhileAnotherIsStillRunning) {
  Limits limits;
  limits.max_run_seconds = 8;
  limits.concurrent_runs = 2;
  ServingOnAFreePort served(limits);
  auto long_run = std::async(std::launch::async, [port = served.port] {
    httplib::Client other("127.0.0.1", port);
    other.set_read_timeout(120);
    return other.Post("/api/run",
                      R"({"machine": "dgx-a100-superpod", "workload": "gpt3-175b", "comm": "nccl",
                          "framework": "megatron-lm", "batch": 16, "samples": 32,
                          "variability": {"compute": {"distribution": "normal", "cv": 0.05,
                                                      "source": "a test"}},
                          "gpus": [4096, 3584, 3072, 2560, 2048, 1536, 1024, 512]})",
                      "application/json");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it holds a process by now
  const auto quick = served.client.Post("/api/run",
                                        R"({"machine": "dgx1-v100", "workload": "lenet",
                                            "comm": "p2p", "gpus": [1, 2], "batch": 16})",
                                        "application/json");
  ASSERT_TRUE(quick);
  EXPECT_EQ(quick->status, 200) << quick->body;
  EXPECT_EQ(long_run.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "the quick run waited for the long one";
  const auto ended = long_run.get();
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->status, 503) << ended->body;
}

// The processes answering the API die (here killed): each question lent to a dead one is a 500
// with a message, it is not lent again, and with none left the server says so (503) rather than
// waiting or dying of SIGPIPE.
TEST(HttpServerShared, AnswersWhenItsProcessesHaveDied) {
  Limits limits;
  limits.concurrent_runs = 2;
  ServingOnAFreePort served(limits);
  std::ifstream children_file("/proc/self/task/" + std::to_string(::gettid()) + "/children");
  std::vector<pid_t> children;
  for (pid_t pid = 0; children_file >> pid;) children.push_back(pid);
  ASSERT_GE(children.size(), 2u) << "no /proc/.../children to find the answering processes";
  for (const pid_t pid : children) ::kill(pid, SIGKILL);
  for (const pid_t pid : children) ::waitpid(pid, nullptr, 0);
  for (const int expected : {500, 500, 503}) {
    const auto res = served.client.Get("/api/machine?name=dgx1-v100");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, expected) << res->body;
    EXPECT_TRUE(nlohmann::json::parse(res->body).contains("error")) << res->body;
  }
}

}  // namespace
}  // namespace gpuscale::serve
