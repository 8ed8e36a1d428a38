// The gradient-exchange methods by name (exchange_method.hpp): a new method is one file plus one
// line in the table of registry.cpp, and a framework lists the methods it has
// (workloads/frameworks/*.yaml, `exchange_methods`).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/exchange/exchange_method.hpp"

namespace gpuscale::sim {

struct ExchangeMethodEntry {
  std::string name;     // "kvstore_device"
  std::string summary;  // one line for listings and --help
  std::unique_ptr<ExchangeMethod> (*make)(ExchangeSettings);
  // The collective algorithm of its transfers where it makes them itself (kvstore_device's
  // copies: p2p); empty: it runs the algorithm the run names (--algo).
  std::string own_algorithm = {};
  // The --comm alias that stands for it where a framework has it (MXNet's kvstore=device was
  // the study's "p2p"); empty: none.
  std::string comm_alias = {};
};

const std::vector<ExchangeMethodEntry>& exchange_methods();
std::vector<std::string> exchange_method_names();
// Throws ConfigError "unknown exchange method 'kvstore_devce' (did you mean 'kvstore_device'?)"
// blaming `named_at`.
const ExchangeMethodEntry& find_exchange_method(std::string_view name, const Origin& named_at = {});

}  // namespace gpuscale::sim
