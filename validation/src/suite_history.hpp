// What a suite has been through (docs/validation.md, "First look and development suites"): its
// error the first time the model met it, before any change it motivated, with the commit whose
// model predicted it; and whether it has since been used to choose between model changes, which
// makes it a development suite, not a validation suite. `validate` prints both beside the
// current error, so that a headline number is read with its history.
//
//   history:
//     first_look: {commit: 3ecd09d, date: 2026-11-29, mape_pct: {speedup: 26.9, overall: 225.4},
//                  claims: 1 of 3}       # mape_pct, claims or both
//     development: false        # or why and how the suite has been used to choose changes
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "topologies/core/config_tree.hpp"

namespace gpuscale::validation {

struct FirstLook {
  std::string commit;  // the commit whose model made the predictions
  std::string date;    // YYYY-MM-DD
  std::map<std::string, double> mape_pct;  // per table id, and "overall"
  std::string claims;  // the claims that held ("6 of 7"), for a suite with claims
  std::string note;    // how the numbers were recovered, where they are not the suite's own run
};

struct SuiteHistory {
  bool recorded = false;  // the suite has a `history:`
  FirstLook first_look;
  std::string development;  // empty: held out, never used to choose between model changes
};

// `history:` of a suite file (null: not recorded). Throws ConfigError at the line for unknown
// keys, a table the suite does not have, a malformed date or a negative error.
SuiteHistory read_suite_history(const ConfigNode* node, const std::vector<std::string>& tables);

// The footer `validate` prints: the first look's commit and date, and whether the suite is a
// development suite (and why) or held out.
std::string history_summary(const SuiteHistory& history);

// "first look" column of the MAPE table: the table's first-look error, "-" where none.
std::string first_look_cell(const SuiteHistory& history, const std::string& table);

// `history` of validate's JSON: null when not recorded, else the first look and `development`
// (false, or why).
nlohmann::ordered_json history_json(const SuiteHistory& history);

}  // namespace gpuscale::validation
