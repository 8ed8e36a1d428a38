// The options that name a run's gradient exchange (sim/exchange/exchange_choice.hpp): the
// framework's method (--exchange) and the allreduce's collective algorithm (--algo), or --comm,
// one name each that stands for such a pair (today's values, kept as aliases).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace gpuscale::cli {

struct ExchangeOptions {
  std::vector<std::string> comms, exchanges, algos;
};

// Adds --comm, --exchange and --algo to `cmd`; `comm_default` is what --help says --comm defaults
// to, `several`: whether each takes a comma-separated list.
void add_exchange_options(CLI::App& cmd, ExchangeOptions& o, const std::string& comm_default,
                          bool several);

// The exchanges the options name (exchange_choice.hpp's names), empty if none was given. Throws
// ConfigError naming the option for an unknown name, or for --comm beside --exchange or --algo.
std::vector<std::string> exchange_names(const ExchangeOptions& o, const CLI::App& cmd);

}  // namespace gpuscale::cli
