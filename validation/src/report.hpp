// The comparison as text for people (`gpuscale validate`) or JSON for scripts (`--format json`):
//   {"suite", "points": [{"id", "table", "network", "method", "gpus", "batch", "scaling",
//    "measured", "predicted", "error_pct", "suspect"}], "bounds": [{"id", "table", ...,
//    "below", "predicted", "holds"}], "claims": [{"id", "kind", "holds", "checks": [{"what",
//    "value", "holds"}], "why_not_checked"}], "mape_pct": {TABLE: mape or null, "overall"}}
// The same comparison gives the same bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "validation/src/comparison.hpp"
#include "validation/src/suite.hpp"

namespace gpuscale::validation {

std::string comparison_table(const Suite& suite, const Comparison& comparison);
nlohmann::ordered_json comparison_json(const Suite& suite, const Comparison& comparison);

}  // namespace gpuscale::validation
