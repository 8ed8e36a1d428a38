// The study's qualitative claims (claims.yaml) checked against the predictions.
//
// Each claim kind has one or more forms: the params keys it takes, and the function that checks
// them (claims.cpp, one small function per form). A claim's params must match exactly one form
// of its kind; `not_checked` claims have none and are listed with their reason.
//
// Contract of a form's function: one Check per case the claim covers (network, method, GPU
// count, batch...), each with the value compared and whether it holds, nullopt where the claim
// gives no tolerance (`within_pct: null`): then the value is reported without a verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "validation/src/metrics.hpp"
#include "validation/src/suite.hpp"

namespace gpuscale::validation {

struct Check {
  std::string what;  // "LeNet 8 GPUs batch 16: epoch time P2P / NCCL"
  double value = 0;
  std::optional<bool> holds;
};

struct ClaimForm {
  std::string kind;
  std::string over;  // the value `over` must have for this form; empty if the kind has no `over`
  std::vector<std::string> required;
  std::vector<std::string> optional;
  std::vector<Check> (*check)(const ClaimParams&, const Metrics&);
};

// Every form of every kind.
const std::vector<ClaimForm>& claim_forms();

struct ClaimResult {
  std::string id, kind;
  // false if a check fails; else nullopt if one has no verdict (or none ran, or not checked);
  // else true.
  std::optional<bool> holds;
  std::vector<Check> checks;
  std::string why_not_checked;
};

ClaimResult evaluate_claim(const Claim& claim, const Metrics& metrics);

}  // namespace gpuscale::validation
