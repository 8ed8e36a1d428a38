// TrainResult as JSON, every field: how a layout simulated in a child process comes back
// (isolated.hpp's run_isolated_as). This is the one codec of TrainResult and of its parts.
//
// Why a file of its own rather than beside each type: the parts live in four headers
// (train_job, pipeline_sim, layout, parallel_memory) that need no JSON; only the hand-off does.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "sim/parallel/layout.hpp"
#include "sim/parallel/parallel_memory.hpp"
#include "sim/parallel/pipeline_sim.hpp"
#include "sim/parallel/train_job.hpp"

namespace gpuscale::par {

void to_json(nlohmann::json& j, const TrainResult& result);
void from_json(const nlohmann::json& j, TrainResult& result);

// Its parts. The recompute mode goes by its name (to_string / recompute_by_name).
void to_json(nlohmann::json& j, const ParallelLayout& layout);
void from_json(const nlohmann::json& j, ParallelLayout& layout);
void to_json(nlohmann::json& j, const StageResult& stage);
void from_json(const nlohmann::json& j, StageResult& stage);
void to_json(nlohmann::json& j, const PipelineResult& result);
void from_json(const nlohmann::json& j, PipelineResult& result);
void to_json(nlohmann::json& j, const StageTimes& times);
void from_json(const nlohmann::json& j, StageTimes& times);
void to_json(nlohmann::json& j, const StageMemory& memory);
void from_json(const nlohmann::json& j, StageMemory& memory);

}  // namespace gpuscale::par
