// `gpuscale serve`'s HTTP side: the page (tools/serve/web/: index.html, app.js, style.css, read
// once from the data tree), the docs its numbers link to (docs/*.md as HTML, docs_html.hpp, and
// their figures) and the JSON API (serve_api.hpp, answered by an ApiPool) under /api/. Bad input
// is answered 400 with {"error": "one line"}, a body over the limit 413, a run past its time 503;
// nothing outside the data tree is read and nothing is written.
#pragma once

#include <memory>
#include <string>

#include "tools/serve/serve_api.hpp"

namespace gpuscale::serve {

class HttpServer {
 public:
  explicit HttpServer(const Limits& limits);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds to `host`:`port` (0: a free port) and returns the port; throws ConfigError, naming
  // --bind and --port, when it cannot.
  int bind(const std::string& host, int port);
  // Answers requests until stop() (from another thread or a signal handler's thread).
  void serve();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscale::serve
