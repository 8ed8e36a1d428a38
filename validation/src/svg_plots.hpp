// The figures of `gpuscale validate --plot DIR`, one SVG file each, per network of the suite:
//  - speedup-NETWORK.svg: predicted speedup over GPUs per method (solid), the measured points
//    (dashed, squares) and bounds (open triangles) at the setup's first batch, and ideal scaling;
//  - breakdown-NETWORK.svg: predicted FP+BP and WU time per epoch (stacked) per GPU count and
//    method, at the setup's first batch (the study's breakdown figure was not transcribed);
//  - memory-NETWORK.svg: measured (pale) and predicted (solid) memory per GPU for each memory
//    table and batch, where the suite measured any.
#pragma once

#include <string>
#include <vector>

#include "validation/src/comparison.hpp"
#include "validation/src/metrics.hpp"
#include "validation/src/suite.hpp"

namespace gpuscale::validation {

// Writes the figures into `dir` (created if missing); returns their paths, in a fixed order.
// Throws ConfigError when the folder cannot be created or written.
std::vector<std::string> write_plots(const Suite& suite, const Metrics& metrics,
                                     const Comparison& comparison, const std::string& dir);

}  // namespace gpuscale::validation
