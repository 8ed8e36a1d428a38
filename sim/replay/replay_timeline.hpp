// The timeline of a simulated run (timeline.hpp), read off the DAG once it has run:
//  - "gpuN kernels": the GPU's compute stream (forward, backward, update kernels);
//  - "gpuN copies": the GPU's part in the gradient exchange: each transfer it sends, from the
//    start of its first leg to the end of its last (a two-hop copy is one event), named after
//    its destination, and each reduction it runs (a kernel that shares the GPU with the compute
//    stream);
//  - "KIND a>b": one direction of a link, each leg of each transfer that crosses it, named after
//    the transfer's ends and, for store-and-forward routes, the leg ("leg 2/2"): the second leg
//    of a two-hop copy starts on its link when the first has landed.
// Tracks come GPU by GPU (kernels, then copies), then links, in the order events first use them.
#pragma once

#include <string>
#include <vector>

#include "sim/engine/dag_executor.hpp"
#include "sim/engine/schedule_nodes.hpp"
#include "sim/replay/timeline.hpp"
#include "topologies/src/routing.hpp"

namespace gpuscale::sim {

// What a GPU kernel does, as a trace viewer filters it (the event's `cat`).
// `input`: a GPU's decode of its batch (decoding on the GPU).
enum class KernelCategory { forward, backward, update, reduction, copy, input };
const char* to_string(KernelCategory category);

struct KernelRecord {
  DagExecutor::NodeId node = -1;
  int rank = 0;
  std::string name;       // "fwd conv1"
  KernelCategory category = KernelCategory::forward;
  std::string layer;      // the layer, or the parameter tensor of an update, sum or copy
  std::string algorithm;  // a convolution's algorithm ("winograd"); empty for other kernels
  double bytes = 0;       // what an update, sum or copy works on; 0 for a layer's kernels
};

// A kernel's description; its node and rank are set where it is added to the DAG.
KernelRecord kernel_record(std::string name, KernelCategory category, std::string layer,
                           double bytes = 0, std::string algorithm = {});

// `gpus`: device indices in rank order. The DAG must have recorded its legs (record_legs) and
// the compiler its ops (record_ops).
std::vector<TimelineEvent> replay_timeline(const topo::Topology& topology,
                                           const topo::Router& router, const std::vector<int>& gpus,
                                           const DagExecutor& dag, ScheduleCompiler& compiler,
                                           const std::vector<KernelRecord>& kernels);

}  // namespace gpuscale::sim
