#include "tools/gpuscale/exchange_options.hpp"

#include <fmt/format.h>

#include "sim/collectives/registry.hpp"
#include "sim/exchange/exchange_choice.hpp"
#include "sim/exchange/registry.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::cli {
namespace {

std::string methods_help() {
  std::string help = "The framework's gradient-exchange method";
  for (const sim::ExchangeMethodEntry& m : sim::exchange_methods()) {
    help += fmt::format("; {}: {}", m.name, m.summary);
  }
  return help;
}

std::string algorithms_help() {
  return fmt::format("The collective algorithm of --exchange allreduce (default nccl_ring): {}",
                     fmt::join(coll::algorithms_implementing(coll::Collective::AllReduce), ", "));
}

std::string comm_help(const std::string& comm_default) {
  return fmt::format(
      "The gradient exchange as one name: p2p = --exchange kvstore_device where the framework "
      "has it (MXNet), else --exchange allreduce --algo p2p; nccl_reduce_bcast = --exchange "
      "kvstore_nccl likewise; nccl = --exchange allreduce --algo nccl_ring; any other algorithm A "
      "= --exchange allreduce --algo A; also kvstore_device, kvstore_nccl, allreduce:A (default "
      "{})",
      comm_default);
}

}  // namespace

void add_exchange_options(CLI::App& cmd, ExchangeOptions& o, const std::string& comm_default,
                          bool several) {
  const std::string list = several ? ", comma-separated" : "";
  auto* comm = cmd.add_option("--comm", o.comms, comm_help(comm_default) + list);
  auto* exchange = cmd.add_option("--exchange", o.exchanges, methods_help() + list);
  auto* algo = cmd.add_option("--algo", o.algos, algorithms_help() + list);
  for (CLI::Option* option : {comm, exchange, algo}) {
    if (several) {
      option->delimiter(',');
    } else {
      option->expected(1);
    }
  }
}

std::vector<std::string> exchange_names(const ExchangeOptions& o, const CLI::App& cmd) {
  const bool comm = cmd.count("--comm") > 0;
  const bool pair = cmd.count("--exchange") > 0 || cmd.count("--algo") > 0;
  if (comm && pair) {
    throw ConfigError({"--comm", 0},
                      "names the exchange and its algorithm in one name: give it, "
                      "or --exchange and --algo, not both");
  }
  if (comm) {
    for (const std::string& name : o.comms) sim::check_exchange_name(name, {"--comm", 0});
    return o.comms;
  }
  if (!pair) return {};
  const Origin at{cmd.count("--exchange") > 0 ? "--exchange" : "--algo", 0};
  return sim::exchange_names(o.exchanges, o.algos, at);
}

}  // namespace gpuscale::cli
