// The collective algorithms by name: a new algorithm is one file plus one line in the table of
// registry.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/collectives/request.hpp"
#include "sim/collectives/schedule.hpp"

namespace gpuscale::coll {

struct Algorithm {
  std::string name;                     // "nccl_ring"
  std::vector<Collective> collectives;  // what it implements
  std::string summary;                  // one line for listings
  Schedule (*build)(const CollectiveRequest&);
  // The algorithms whose schedules it returns when it chooses among others by size and ranks
  // (aluminum); empty: its own. The pairs of ranks a schedule uses do not depend on its size
  // otherwise, so these are what a caller routing every pair of a run (the replay) must ask.
  std::vector<std::string> runs = {};
};

const std::vector<Algorithm>& algorithms();
std::vector<std::string> algorithm_names();

bool implements(const Algorithm& algorithm, Collective kind);
// `runs` of the algorithm named `name`, or the name itself when it runs only its own schedules.
std::vector<std::string> algorithms_run_by(std::string_view name);
// Whether the schedule `name` runs for `bytes` over `ranks` follows NCCL's protocols (their
// latencies and wire bytes, CollectiveRequest::protocol): NCCL's own algorithms, and aluminum
// where it picks NCCL's ring; an MPI library's and MXNet's copies know nothing of them.
bool follows_nccl_protocol(std::string_view name, double bytes, int ranks);
// The names of the algorithms that implement `kind`, in table order.
std::vector<std::string> algorithms_implementing(Collective kind);

// Throws ConfigError "unknown algorithm 'rnig' (did you mean 'ring'?)".
const Algorithm& find_algorithm(std::string_view name);

// The schedule of `algorithm` for `request`: checks the request (ConfigError when malformed or
// when the algorithm does not implement the collective), gives an empty schedule for one rank or
// zero bytes, else the algorithm's.
Schedule build_schedule(std::string_view algorithm, const CollectiveRequest& request);

}  // namespace gpuscale::coll
