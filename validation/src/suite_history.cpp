#include "validation/src/suite_history.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "topologies/core/config_reader.hpp"

namespace gpuscale::validation {
namespace {

FirstLook read_first_look(const ConfigNode& node, const std::vector<std::string>& tables) {
  const MapReader map(node, "first_look", {"commit", "date", "mape_pct", "claims", "note"});
  FirstLook f;
  f.commit = map.string("commit", "3ecd09d");
  const ConfigNode& date = map.require("date", "2026-11-29");
  f.date = read_string(date, "date");
  if (!std::regex_match(f.date, std::regex(R"(\d{4}-\d{2}-\d{2})"))) {
    throw ConfigError(date.origin(), fmt::format("date '{}' is not YYYY-MM-DD", f.date));
  }
  if (const auto note = map.optional_string("note")) f.note = *note;
  if (const auto claims = map.optional_string("claims")) f.claims = *claims;
  const ConfigNode* found = map.find("mape_pct");
  if (found == nullptr && !f.claims.empty()) return f;  // a suite of claims
  const ConfigNode& errors =
      found != nullptr ? *found : map.require("mape_pct", "{throughput: 12.3, overall: 12.3}");
  if (!errors.is_map() || errors.entries().empty()) {
    throw ConfigError(errors.origin(), "mape_pct must map table ids (and 'overall') to the "
                                       "first look's MAPE in %, e.g. {throughput: 12.3}");
  }
  for (const ConfigNode::Entry& e : errors.entries()) {
    if (e.key != "overall" && std::find(tables.begin(), tables.end(), e.key) == tables.end()) {
      std::vector<std::string> known = tables;
      known.emplace_back("overall");
      throw ConfigError(e.where(), "first_look: " + unknown_name_message("table", e.key, known));
    }
    f.mape_pct[e.key] = read_number(e.value, "mape_pct", 0, 1e6);
  }
  return f;
}

}  // namespace

SuiteHistory read_suite_history(const ConfigNode* node, const std::vector<std::string>& tables) {
  SuiteHistory h;
  if (node == nullptr) return h;
  const MapReader map(*node, "history", {"first_look", "development"});
  h.recorded = true;
  h.first_look = read_first_look(map.require("first_look", "{commit: 3ecd09d, date: 2026-11-29, "
                                                           "mape_pct: {overall: 12.3}}"),
                                 tables);
  const ConfigNode& development = map.require("development", "false");
  if (development.is_scalar() && development.value() == "true") {
    throw ConfigError(development.origin(), "development: say how the suite has been used to "
                                            "choose between model changes (a sentence), or false");
  }
  if (development.value() != "false") h.development = read_string(development, "development");
  return h;
}

std::string history_summary(const SuiteHistory& history) {
  if (!history.recorded) return "first look: not recorded (add `history:` to suite.yaml)\n";
  const FirstLook& f = history.first_look;
  std::string out = fmt::format("first look: commit {}, {}{}{}\n", f.commit, f.date,
                                f.claims.empty() ? "" : ", claims: " + f.claims + " held",
                                f.note.empty() ? "" : " (" + f.note + ")");
  out += history.development.empty()
             ? "held out: never used to choose between model changes\n"
             : "development suite: " + history.development + "\n";
  return out;
}

std::string first_look_cell(const SuiteHistory& history, const std::string& table) {
  const auto it = history.first_look.mape_pct.find(table);
  return it == history.first_look.mape_pct.end() ? "-" : fmt::format("{:.1f}", it->second);
}

nlohmann::ordered_json history_json(const SuiteHistory& history) {
  if (!history.recorded) return nullptr;
  const FirstLook& f = history.first_look;
  nlohmann::ordered_json first_look = {{"commit", f.commit}, {"date", f.date}, {"mape_pct", f.mape_pct}};
  if (!f.claims.empty()) first_look["claims"] = f.claims;
  if (!f.note.empty()) first_look["note"] = f.note;
  return {{"first_look", first_look},
          {"development", history.development.empty() ? nlohmann::ordered_json(false)
                                                      : nlohmann::ordered_json(history.development)}};
}

}  // namespace gpuscale::validation
