#include "tools/gpuscale/serve_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <thread>

#include "tools/gpuscale/console.hpp"
#include "tools/serve/http_server.hpp"

namespace gpuscale::cli {
namespace {

struct ServeOptions {
  std::string bind = "127.0.0.1";
  int port = 8080;
  serve::Limits limits;
};

// A run simulates its configurations one after another, one core's work: a run per core, from 2
// to 8, keeps a class's runs side by side without a long queue or an overloaded machine.
int runs_at_once_by_default() {
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 2, 8);
}

void serve_page(const ServeOptions& o) {
  serve::HttpServer server(o.limits);
  const int port = server.bind(o.bind, o.port);
  if (o.bind != "127.0.0.1" && o.bind != "localhost" && o.bind != "::1") {
    warning(fmt::format("listening on {}: anyone who can reach it can run simulations here "
                        "(each within the limits: --max-gpus, --run-seconds)",
                        o.bind));
  }
  std::cout << fmt::format("gpuscale serve: open http://{}:{}/ (Ctrl-C stops it)\n",
                           o.bind == "::1" ? "[::1]" : o.bind, port)
            << std::flush;
  server.serve();
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  auto* cmd = app.add_subcommand("serve", "Serve the page for what-if studies and teaching: "
                                          "choose a machine and a model, edit links, run, compare");
  cmd->add_option("--port", o->port, "Port to listen on (0: any free one)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--bind", o->bind, "Address to listen on; other than 127.0.0.1, anyone who "
                                     "reaches it can run simulations")
      ->capture_default_str();
  cmd->add_option("--max-gpus", o->limits.max_gpus, "The most GPUs one configuration may have")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--run-seconds", o->limits.max_run_seconds,
                  "A run past this many seconds is ended and reported")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  o->limits.concurrent_runs = runs_at_once_by_default();
  cmd->add_option("--runs-at-once", o->limits.concurrent_runs,
                  "Runs answered at the same time (one process each); more wait their turn")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->callback([o] { serve_page(*o); });
}

}  // namespace gpuscale::cli
