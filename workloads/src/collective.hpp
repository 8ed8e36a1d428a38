// The collectives a workload asks for (a trace's ALL_REDUCE, a kvstore's reduce and broadcast),
// one name each across the CLI, YAML and output, as NCCL and nccl-tests name them. The algorithms
// that run them (sim/collectives) take these kinds as coll::Collective.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuscale::wl {

enum class Collective { AllReduce, Reduce, Broadcast, AllGather, ReduceScatter, AllToAll };
// "allreduce", "reduce", "broadcast", "allgather", "reducescatter", "alltoall"
const char* to_string(Collective kind);
const std::vector<Collective>& all_collectives();  // in the order above
std::vector<std::string> collective_names();      // to_string of each, same order
// Throws ConfigError "unknown collective 'allgater' (did you mean 'allgather'?)".
Collective collective_by_name(std::string_view name);

}  // namespace gpuscale::wl
