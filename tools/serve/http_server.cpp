#include "tools/serve/http_server.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tools/serve/api_process.hpp"
#include "tools/serve/docs_html.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/shipped_files.hpp"

namespace gpuscale::serve {
namespace {

struct WebFile {
  std::string content_type;
  std::string text;
};

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The page's files, read once: with the docs (below), the only files the server reads besides
// the shipped YAML.
std::map<std::string, WebFile> web_files() {
  const std::string folder = data_root() + "/tools/serve/web/";
  const std::map<std::string, std::string> types = {
      {"index.html", "text/html; charset=utf-8"},
      {"app.js", "text/javascript; charset=utf-8"},
      {"style.css", "text/css; charset=utf-8"}};
  std::map<std::string, WebFile> files;
  for (const auto& [name, type] : types) {
    if (!std::filesystem::is_regular_file(folder + name)) {
      throw ConfigError(Origin{folder + name, 0},
                        "the page's file is missing: reinstall gpuscale or set GPUSCALE_DATA_DIR "
                        "to its source tree");
    }
    files["/" + name] = {type, file_text(folder + name)};
  }
  files["/"] = files.at("/index.html");
  return files;
}

// The docs the page's numbers link to, read once: docs/*.md as HTML pages (docs_html.hpp) and the
// figures they show (docs/figures/*.png, *.svg), each under its name.
std::map<std::string, WebFile> docs() {
  std::map<std::string, WebFile> files;
  const std::filesystem::path folder = std::filesystem::path(data_root()) / "docs";
  if (!std::filesystem::is_directory(folder)) return files;  // an install without the docs
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".md")
      files[name] = {"text/html; charset=utf-8", docs_page_html(name, file_text(entry.path()))};
  }
  const std::map<std::string, std::string> figure_types = {{".png", "image/png"},
                                                           {".svg", "image/svg+xml"}};
  if (std::filesystem::is_directory(folder / "figures")) {
    for (const auto& entry : std::filesystem::directory_iterator(folder / "figures")) {
      const auto type = figure_types.find(entry.path().extension().string());
      if (type != figure_types.end())
        files["figures/" + entry.path().filename().string()] = {type->second,
                                                                file_text(entry.path())};
    }
  }
  return files;
}

void answer_json(httplib::Response& res, int status, const nlohmann::ordered_json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void answer_error(httplib::Response& res, int status, const std::string& message) {
  answer_json(res, status, {{"error", message}});
}

void relay(httplib::Response& res, const ApiAnswer& answer) {
  res.status = answer.status;
  res.set_content(answer.json, "application/json");
}

}  // namespace

struct HttpServer::Impl {
  explicit Impl(const Limits& limits) : api(limits) {}
  ApiPool api;  // forked first, while this process has one thread
  httplib::Server server;
  std::map<std::string, WebFile> files;
  std::map<std::string, WebFile> docs;
  nlohmann::ordered_json catalog;
};

HttpServer::HttpServer(const Limits& limits) : impl_(std::make_unique<Impl>(limits)) {
  Impl& s = *impl_;
  s.files = web_files();
  s.docs = docs();
  s.catalog = catalog(limits);
  s.server.set_payload_max_length(limits.max_request_bytes);
  s.server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 413) {
      answer_error(res, 413, "the request is larger than a request may be");
    } else if (res.status == 404) {
      answer_error(res, 404, fmt::format("no page or API at {}", req.path));
    }
  });
  for (const auto& [path, web_file] : s.files) {
    s.server.Get(path, [&served = web_file](const httplib::Request&, httplib::Response& res) {
      res.set_content(served.text, served.content_type);
    });
  }
  s.server.Get(R"(/docs/((figures/)?[a-z0-9-]+\.(md|png|svg)))",
               [&s](const httplib::Request& req, httplib::Response& res) {
                 const auto page = s.docs.find(req.matches[1].str());
                 if (page == s.docs.end()) {
                   answer_error(res, 404, fmt::format("no docs page {}", req.matches[1].str()));
                   return;
                 }
                 res.set_content(page->second.text, page->second.content_type);
               });
  s.server.Get("/api/catalog", [&s](const httplib::Request&, httplib::Response& res) {
    answer_json(res, 200, s.catalog);
  });
  s.server.Get("/api/machine", [&s](const httplib::Request& req, httplib::Response& res) {
    relay(res, s.api.machine(req.get_param_value("name")));
  });
  s.server.Post("/api/run", [&s](const httplib::Request& req, httplib::Response& res) {
    relay(res, s.api.run(req.body));
  });
  s.server.Post("/api/train", [&s](const httplib::Request& req, httplib::Response& res) {
    relay(res, s.api.train(req.body));
  });
}

HttpServer::~HttpServer() = default;

int HttpServer::bind(const std::string& host, int port) {
  const int bound = port == 0 ? impl_->server.bind_to_any_port(host)
                              : (impl_->server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    throw ConfigError(Origin{fmt::format("--bind {} --port {}", host, port), 0},
                      "cannot listen there (the port in use, or the address not this "
                      "machine's): choose another --port or --bind");
  }
  return bound;
}

void HttpServer::serve() { impl_->server.listen_after_bind(); }

void HttpServer::stop() { impl_->server.stop(); }

}  // namespace gpuscale::serve
