#include "tools/gpuscale/console.hpp"

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace gpuscale::cli {

void init_console() {
  auto logger = spdlog::stderr_logger_st("gpuscale");
  logger->set_pattern("%v");
  spdlog::set_default_logger(logger);
  spdlog::cfg::load_env_levels();
}

void progress(std::string_view line) { spdlog::info("{}", line); }

void warning(std::string_view message) { spdlog::warn("gpuscale: warning: {}", message); }

}  // namespace gpuscale::cli
