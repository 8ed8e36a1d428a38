#include "sim/collectives/registry.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/collectives/algorithms.hpp"
#include "topologies/core/config_reader.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::coll {
namespace {

constexpr Collective kAll = Collective::AllReduce;
constexpr Collective kReduce = Collective::Reduce;
constexpr Collective kBcast = Collective::Broadcast;
constexpr Collective kGather = Collective::AllGather;
constexpr Collective kScatter = Collective::ReduceScatter;
constexpr Collective kAllToAll = Collective::AllToAll;

}  // namespace

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> table = {
      {"nccl_ring", {kAll, kReduce, kBcast, kGather, kScatter, kAllToAll},
       "NCCL ring, pipelined (flow-level); all-to-all as grouped sends", build_nccl_ring},
      {"nccl_reduce_bcast", {kAll}, "MXNet kvstore=nccl: ncclReduce then ncclBcast",
       build_nccl_reduce_bcast},
      {"nccl_tree", {kAll}, "NCCL double binary tree across nodes, pipelined", build_nccl_tree},
      {"nccl_nvls", {kAll}, "NCCL NVLS: the NVSwitch reduces (Hopper, one node)",
       build_nccl_nvls},
      // nccl_nvls's flows follow channel ring 0, pairs nccl_ring uses: not listed in `runs`, so
      // that routing a machine without NVLS never builds it.
      {"nccl_auto", {kAll}, "NCCL's own choice of ring, tree or NVLS by its cost model",
       build_nccl_auto, {"nccl_ring", "nccl_tree"}},
      {"ring", {kAll}, "MPI ring: reduce-scatter + allgather", build_ring},
      {"recursive_doubling", {kAll}, "MPI recursive doubling (MPICH)", build_recursive_doubling},
      {"rabenseifner", {kAll}, "MPI recursive halving + doubling (MPICH)", build_rabenseifner},
      {"binomial_tree", {kAll, kReduce, kBcast}, "MPI binomial reduce + broadcast",
       build_binomial_tree},
      {"hierarchical", {kAll}, "reduce in node, ring over node leaders, broadcast in node",
       build_hierarchical},
      {"p2p", {kAll, kReduce, kBcast}, "MXNet kvstore=device: gather, reduce, copy back",
       build_p2p},
      {"aluminum", {kAll}, "LBANN + Aluminum: NCCL ring, MPI host-transfer for small at scale",
       build_aluminum, {"nccl_ring", "recursive_doubling", "rabenseifner"}},
  };
  return table;
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const auto& a : algorithms()) names.push_back(a.name);
  return names;
}

const Algorithm& find_algorithm(std::string_view name) {
  for (const auto& a : algorithms()) {
    if (a.name == name) return a;
  }
  throw ConfigError({}, unknown_name_message("algorithm", name, algorithm_names()));
}

bool implements(const Algorithm& algorithm, Collective kind) {
  const auto& kinds = algorithm.collectives;
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

std::vector<std::string> algorithms_run_by(std::string_view name) {
  const Algorithm& a = find_algorithm(name);
  return a.runs.empty() ? std::vector<std::string>{a.name} : a.runs;
}

bool follows_nccl_protocol(std::string_view name, double bytes, int ranks) {
  const std::string ran =
      name == "aluminum" ? aluminum_choice(bytes, ranks) : find_algorithm(name).name;
  return ran.starts_with("nccl_");
}

std::vector<std::string> algorithms_implementing(Collective kind) {
  std::vector<std::string> names;
  for (const auto& a : algorithms()) {
    if (implements(a, kind)) names.push_back(a.name);
  }
  return names;
}

Schedule build_schedule(std::string_view algorithm, const CollectiveRequest& request) {
  const Algorithm& a = find_algorithm(algorithm);
  if (!implements(a, request.kind)) {
    std::vector<std::string> kinds;
    for (Collective c : a.collectives) kinds.push_back(to_string(c));
    throw ConfigError({}, fmt::format("algorithm '{}' does not implement {} (it implements: {}; "
                                      "{} is implemented by: {})",
                                      a.name, to_string(request.kind), fmt::join(kinds, ", "),
                                      to_string(request.kind),
                                      fmt::join(algorithms_implementing(request.kind), ", ")));
  }
  check_request(request);
  if (request.ranks < 2 || request.bytes == 0) {
    return Schedule{a.name, request.ranks, request.bytes, {}};
  }
  return a.build(request);
}

}  // namespace gpuscale::coll
