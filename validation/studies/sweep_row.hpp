// One finished run of a study: what ran (its index in the study and its content hash) and what
// the simulator predicted, speedup included (against the same run on one GPU).
#pragma once

#include <string>

#include "sim/experiment/experiment.hpp"
#include "validation/studies/study.hpp"

namespace gpuscale::sweep {

struct SweepRow {
  size_t index = 0;   // in Study::runs
  std::string hash;   // of the run's inputs (run_hash.hpp)
  Run run;
  sim::ResultRow result;
};

}  // namespace gpuscale::sweep
