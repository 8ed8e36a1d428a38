// CollectiveJobResult as JSON, every field: how a collective simulated in a child process comes
// back (isolated.hpp's run_isolated_as). This is the one codec of CollectiveJobResult.
//
// Why a file of its own rather than beside the type: collective_job.hpp needs no JSON; only the
// hand-off does.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "sim/experiment/collective_job.hpp"

namespace gpuscale::sim {

void to_json(nlohmann::json& j, const CollectiveJobResult& result);
void from_json(const nlohmann::json& j, CollectiveJobResult& result);

}  // namespace gpuscale::sim
