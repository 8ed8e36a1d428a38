// The comparison as text for people (`gpuscale validate`) or JSON for scripts (`--format json`):
//   {"suite", "points": [{"id", "table", "network", "method", "gpus", "batch", "scaling",
//    "measured", "predicted", "error_pct", "suspect"}], "bounds": [{"id", "table", ...,
//    "below", "predicted", "holds"}], "claims": [{"id", "kind", "holds", "checks": [{"what",
//    "value", "holds"}], "why_not_checked"}], "mape_pct": {TABLE: mape or null, "overall"},
//    "calibration_mape_pct": {TABLE: mape, "overall"}, "framework": {"name", "fitted": [{"name",
//    "unit" (s or bytes), "value", "range"}], "fitted_on", "calibration_points": [{"suite", "id"}]}}
//    "alternative_readings": [{"table", "id", "gpus", "mape_pct"}], "setup_readings": [{"id",
//    "batch_per", "decode_threads", "fusion_mb", "data", "networks" and/or "methods" (what it
//    changes), "mape_pct": {TABLE: mape or null, "overall"}, "bounds_holding", "bounds",
//    "claims_holding", "claims_that_hold": [ID]}]
// Points carry "role": "calibration" or "validation"; every MAPE but calibration_mape_pct is over
// validation points only.
// The same comparison gives the same bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "validation/src/comparison.hpp"
#include "validation/src/suite.hpp"
#include "workloads/src/framework.hpp"

namespace gpuscale::validation {

// What a reading of the setup changes, in words: "batch per all GPUs together; 39 decode
// threads; fusion buffer 0 MB; GoogLeNet = googlenet-299; Sample = nccl; EDSR under edsr.yaml".
std::string reading_text(const SetupAlternative& reading);

// `readings`: the comparison under each of the setup's alternative readings, reported after the
// headline's tables as their MAPE per table and bounds held.
std::string comparison_table(const Suite& suite, const Comparison& comparison,
                             const wl::FrameworkConfig& framework,
                             const std::vector<SetupReadingResult>& readings = {});
nlohmann::ordered_json comparison_json(const Suite& suite, const Comparison& comparison,
                                       const wl::FrameworkConfig& framework,
                                       const std::vector<SetupReadingResult>& readings = {});

}  // namespace gpuscale::validation
