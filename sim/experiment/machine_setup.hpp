// How a job of N GPUs is laid on a machine, the same way for `gpuscale run` (experiment.hpp),
// `gpuscale collective` (collective_job.hpp) and the benchmarks:
//  - a cluster grows (or shrinks) to the whole nodes the job needs; a single machine keeps its size;
//  - the job takes the first N GPUs of a node when it fits in one, else every GPU of the first
//    N / (GPUs per node) nodes;
//  - NCCL's channel rings over those GPUs (topo::find_rings), as orders of ranks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "topologies/core/config_tree.hpp"
#include "topologies/src/topology.hpp"

namespace gpuscale::sim {

// The machine `topology` (a shipped name or a .yaml file) with the `overrides` (--set), a cluster
// sized to the nodes `gpus` GPUs need. `inline_document`, when given, is the machine itself (a
// study's derived machine, its `base:` resolved) and `topology` only names it.
topo::Topology machine_for(const std::string& topology, const std::vector<std::string>& overrides,
                           int gpus, const std::shared_ptr<const ConfigNode>& inline_document = nullptr);
// The same machine's description, not built: enough to check that a job fits it (a 16,384-GPU
// machine takes a tenth of a second to build).
topo::TopologyConfig machine_config_for(
    const std::string& topology, const std::vector<std::string>& overrides, int gpus,
    const std::shared_ptr<const ConfigNode>& inline_document = nullptr);

// The GPUs of one node (of the whole machine when it is not a cluster).
int gpus_per_node(const topo::Topology& machine);

struct Placement {
  std::vector<int> gpus;                // device indices, in rank order
  std::vector<int> node_of_rank;
  std::vector<std::vector<int>> rings;  // channel rings over ranks
};

// Throws ConfigError at `written_at` (the line or option giving the count) when `gpus` GPUs do
// not fit `machine`: more GPUs than it holds, or more than a node's but not whole nodes.
void check_job_fits(const topo::Topology& machine, int gpus, const Origin& written_at);
// The same from the machine's description (machine_config_for). A description without GPUs
// passes: building it says what is wrong.
void check_job_fits(const topo::TopologyConfig& machine, int gpus, const Origin& written_at);

// The GPUs, nodes and rings of a job of `gpus` GPUs on `machine`. Throws ConfigError (--gpus) when
// they do not fit (check_job_fits).
Placement place_job(const topo::Topology& machine, int gpus);

}  // namespace gpuscale::sim
