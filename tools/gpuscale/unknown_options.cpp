#include "tools/gpuscale/unknown_options.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/core/config_reader.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::cli {
namespace {

std::vector<std::string> long_options_of(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

const CLI::App* subcommand_named(const CLI::App& app, std::string_view name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

}  // namespace

void check_long_options(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* current = &app;
  std::string command = "gpuscale";  // and the subcommands given so far: "gpuscale topo route"
  for (int i = 1; i < argc; ++i) {
    const std::string_view token = argv[i];
    if (token == "--") return;  // what follows is positional
    if (token.starts_with("--")) {
      const std::string name(token.substr(0, token.find('=')));
      const std::vector<std::string> known = long_options_of(*current);
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        throw ConfigError(Origin{command, 0}, unknown_name_message("option", name, known));
      }
    } else if (const CLI::App* sub = subcommand_named(*current, token)) {
      current = sub;
      command += " " + sub->get_name();
    }
  }
}

}  // namespace gpuscale::cli
