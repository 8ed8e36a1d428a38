// The content hash of a run: what a resumed study compares to decide that a run's result is still
// good. It covers everything the result depends on: the run's settings, the machine's resolved
// document (its `base:` chain and files included), the workload's document, the measured profile
// if any, the shipped parameter files (GPU specs, frameworks, datasets, the analytic model's
// constants) and the gpuscale executable itself, so a rebuilt simulator re-runs everything.
// FNV-1a, 64 bits: a cache key, not a defence against forgery.
#pragma once

#include <string>
#include <string_view>

#include "validation/studies/study.hpp"

namespace gpuscale::sweep {

// The hash of what every run of this gpuscale build shares (the executable, shipped parameters),
// read once per process.
std::string build_fingerprint();

// 16 hexadecimal digits of any text.
std::string hash_text(std::string_view text);

// 16 hexadecimal digits.
std::string run_hash(const Run& run, const std::string& build_fingerprint);

}  // namespace gpuscale::sweep
