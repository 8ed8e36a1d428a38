// TraceJobResult as JSON, every field: how an imported iteration replayed in a child process
// comes back (isolated.hpp's run_isolated_as). This is the one codec of TraceJobResult and of the
// TraceResult in it.
//
// Why a file of its own rather than beside the types: trace_job.hpp and trace_replay.hpp need no
// JSON; only the hand-off does.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "sim/trace/trace_job.hpp"
#include "sim/trace/trace_replay.hpp"

namespace gpuscale::sim {

void to_json(nlohmann::json& j, const TraceJobResult& result);
void from_json(const nlohmann::json& j, TraceJobResult& result);
void to_json(nlohmann::json& j, const TraceResult& result);
void from_json(const nlohmann::json& j, TraceResult& result);

}  // namespace gpuscale::sim
