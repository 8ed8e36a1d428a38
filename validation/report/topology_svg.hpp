// A machine as an SVG picture (`gpuscale topo show --format svg`), or as a heat map of how busy
// a simulated configuration kept each of its links (a sweep's links-*.svg).
#pragma once

#include <string>
#include <vector>

#include "sim/experiment/experiment.hpp"
#include "topologies/src/topology.hpp"

namespace gpuscale::report {

// The machine laid out by topology_layout.hpp: devices as boxes coloured by kind, links as lines
// whose width grows with their lanes (relative to the most lanes of that kind). Without `uses`,
// links are coloured by kind and labelled with their lanes. With `uses`, each link is coloured by
// its busier direction on a five-step scale (0-20% ... 80-100% of the direction's effective
// bandwidth over an iteration) and labelled with that percentage; links that carried nothing
// are light grey. A cluster's caption says how many nodes and switches were left out.
std::string render_topology_svg(const topo::Topology& machine,
                                const std::vector<sim::LinkUse>& uses, const std::string& title);

}  // namespace gpuscale::report
