// ResultRow as JSON, every field: how a configuration simulated in a child process comes back
// (isolated.hpp's run_isolated_as, the sweep's process pool) and what the sweep's run cache keeps
// (runs/HASH.json). This is the one codec of ResultRow and of its parts.
//
// Why a file of its own rather than beside ResultRow in experiment.hpp: most of the tree includes
// experiment.hpp, and only the code that hands a row across a process or into the cache needs
// JSON; the declarations here take nlohmann's forward header, the definitions its whole one.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "sim/experiment/experiment.hpp"
#include "sim/replay/timeline.hpp"

namespace gpuscale::sim {

void to_json(nlohmann::json& j, const ResultRow& row);
void from_json(const nlohmann::json& j, ResultRow& row);

// Its parts. A timeline's events and the link uses are arrays of fields in a fixed order, not
// objects: a timeline holds thousands of events.
void to_json(nlohmann::json& j, const IterationSpread& spread);
void from_json(const nlohmann::json& j, IterationSpread& spread);
void to_json(nlohmann::json& j, const LinkUtilisation& use);
void from_json(const nlohmann::json& j, LinkUtilisation& use);
void to_json(nlohmann::json& j, const LinkUse& use);
void from_json(const nlohmann::json& j, LinkUse& use);
void to_json(nlohmann::json& j, const TimelineEvent& event);
void from_json(const nlohmann::json& j, TimelineEvent& event);
void to_json(nlohmann::json& j, const Timeline& timeline);
void from_json(const nlohmann::json& j, Timeline& timeline);

}  // namespace gpuscale::sim
