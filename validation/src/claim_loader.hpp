// Strict reading of a suite's claims.yaml: each claim's params must match one form of its kind
// (claims.hpp) and name only the networks, methods, GPU counts and batches the suite defines.
#pragma once

#include <string>
#include <vector>

#include "validation/src/suite.hpp"
#include "validation/src/suite_reading.hpp"

namespace gpuscale::validation {

std::vector<Claim> load_claims(const std::string& path, const SuiteNames& names);

}  // namespace gpuscale::validation
