// One collective (allreduce by default) simulated alone on a machine, its GPUs, nodes and channel
// rings laid out as `gpuscale run` lays a job (machine_setup.hpp) and its NCCL protocol chosen as
// the replay chooses it (protocol_choice.hpp): what `gpuscale collective` prints and
// tools/bench/bench_replay times.
//
// Reductions (the MPI family, p2p, nccl_reduce_bcast; NCCL rings fuse them into the copy) cost GPU
// time at the rate the analytic compute model streams an elementwise kernel:
// memory bandwidth x copy efficiency (topologies/gpus/*.yaml) x the elementwise memory efficiency
// (sim/compute/analytic-v100.yaml), without the model's per-kernel launch overhead.
#pragma once

#include <string>
#include <vector>

#include "sim/collectives/request.hpp"

namespace gpuscale::sim {

struct CollectiveJob {
  std::string topology = "dgx1-v100";           // a shipped machine or a .yaml file
  std::vector<std::string> topology_overrides;  // --set on the machine
  std::string comm = "nccl";                    // a --comm alias (sim/exchange/exchange_choice.hpp)
  int gpus = 8;
  double bytes = 0;                             // the size S (request.hpp: per collective)
  std::string protocol = "auto";                // NCCL protocol: auto, ll, ll128, simple, ideal
  coll::Collective collective = coll::Collective::AllReduce;  // root 0 where it has one
};

struct CollectiveJobResult {
  std::string topology;  // the machine's name
  std::string protocol;  // the protocol that ran ("auto" resolved)
  double seconds = 0;    // simulated
  long activities = 0;   // SimGrid activities started
};

// Bytes per second of memory traffic a reduction kernel streams on `gpu_model` (see above).
double reduce_bandwidth_Bps(const std::string& gpu_model);

// Simulates `job` in a child process (run_isolated). Throws ConfigError for bad input: unknown
// machine or comm method, a comm method that does not implement the collective (before forking,
// naming those that do), GPUs that do not fit the machine, ...
CollectiveJobResult run_collective_job(const CollectiveJob& job);

}  // namespace gpuscale::sim
