#include "workloads/src/collective.hpp"

#include "topologies/core/config_reader.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::wl {

const char* to_string(Collective kind) {
  switch (kind) {
    case Collective::AllReduce: return "allreduce";
    case Collective::Reduce: return "reduce";
    case Collective::Broadcast: return "broadcast";
    case Collective::AllGather: return "allgather";
    case Collective::ReduceScatter: return "reducescatter";
    case Collective::AllToAll: return "alltoall";
  }
  return "?";
}

const std::vector<Collective>& all_collectives() {
  static const std::vector<Collective> kinds = {
      Collective::AllReduce, Collective::Reduce,        Collective::Broadcast,
      Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll};
  return kinds;
}

std::vector<std::string> collective_names() {
  std::vector<std::string> names;
  for (Collective kind : all_collectives()) names.push_back(to_string(kind));
  return names;
}

Collective collective_by_name(std::string_view name) {
  for (Collective kind : all_collectives()) {
    if (name == to_string(kind)) return kind;
  }
  throw ConfigError({}, unknown_name_message("collective", name, collective_names()));
}

}  // namespace gpuscale::wl
