// How a run names its gradient exchange: the framework's exchange method (--exchange
// kvstore_device|kvstore_nccl|allreduce) and, for an allreduce, its collective algorithm (--algo,
// a sim/collectives registry name), or one name that stands for such a pair: today's --comm
// values, kept as aliases.
//
// The names accepted wherever a method is named (--comm; `comm:` in experiment, study and suite
// files), each resolved in the run's framework:
//   kvstore_device, kvstore_nccl    that method (an error where the framework lacks it);
//   p2p                             kvstore_device where the framework has it (MXNet), else an
//                                   allreduce by the p2p algorithm;
//   nccl_reduce_bcast               kvstore_nccl where the framework has it, else an allreduce by
//                                   the nccl_reduce_bcast algorithm;
//   nccl                            an allreduce by nccl_ring;
//   any other algorithm A           an allreduce by A (nccl_tree, nccl_auto, ring,
//   rabenseifner...); allreduce:A                     an allreduce by A, whatever the framework
//   (allreduce alone: by
//                                   nccl_ring).
// A resolved method is printed under one name, its alias in that framework where one stands for
// it (so --exchange kvstore_device under MXNet prints as p2p, --exchange allreduce --algo
// nccl_ring as nccl), else allreduce:A.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/exchange/exchange_method.hpp"
#include "topologies/core/config_reader.hpp"
#include "topologies/core/error.hpp"
#include "workloads/src/framework.hpp"

namespace gpuscale::sim {

// A name resolved in a framework.
struct ExchangeChoice {
  std::string exchange;   // the exchange method (registry.hpp)
  std::string algorithm;  // the collective algorithm of its transfers
  std::string name;       // how outputs name it (above)
};

// The --comm aliases: every collective algorithm that implements an allreduce, `nccl` for
// nccl_ring; what --help lists.
std::vector<std::string> comm_alias_names();
// The collective algorithm a --comm alias names ("nccl" -> "nccl_ring"); throws ConfigError for
// a name that is not an alias.
std::string algorithm_of_alias(const std::string& comm, const Origin& named_at = {});

// Throws ConfigError at `named_at` unless `name` is accepted (above), naming the near miss.
void check_exchange_name(const std::string& name, const Origin& named_at);
// The names `--exchange` and `--algo` ask for: every exchange with every algorithm where it takes
// one (allreduce), once where it runs its own (the kvstores); no exchange: allreduce; no
// algorithm: nccl_ring. Throws ConfigError at `named_at` for an unknown name, or for algorithms
// given only with methods that run their own.
std::vector<std::string> exchange_names(const std::vector<std::string>& exchanges,
                                        const std::vector<std::string>& algorithms,
                                        const Origin& named_at);

// The exchanges a file names, each with its line: under `comm:` (names, as above), or under
// `exchange:` and `algo:` (methods and algorithms, as --exchange and --algo take them). False,
// and nothing added, where `map` has none of the three; throws ConfigError where it has `comm`
// beside the other two, or an unknown name.
bool read_exchanges(const MapReader& map, std::vector<std::string>& names,
                    std::vector<Origin>& written_at);

// `name` in `framework`. Throws ConfigError at `named_at` for a name not accepted, a method the
// framework lacks, or a framework listing an unknown method (at its line).
ExchangeChoice resolve_exchange(const std::string& name, const wl::FrameworkConfig& framework,
                                const Origin& named_at = {});

// The method `choice` names, made for a run of `framework` grouping allreduces as `allreduce`.
std::unique_ptr<ExchangeMethod> make_exchange(
    const ExchangeChoice& choice, const wl::FrameworkConfig& framework,
    const wl::AllreduceModel& allreduce, wl::ReducerPolicy reducers = wl::ReducerPolicy::Greedy);

}  // namespace gpuscale::sim
