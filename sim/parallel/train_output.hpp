// What `gpuscale train --format json` prints for one layout, and `gpuscale serve`'s /api/train
// answers: one schema for both (docs/parallelism.md).
#pragma once

#include <nlohmann/json.hpp>

#include "sim/parallel/train_job.hpp"

namespace gpuscale::par {

// The layout, its iteration, bubble, throughput, MFU, communication, memory, and each stage's.
nlohmann::json train_output_json(const TrainResult& r);

}  // namespace gpuscale::par
