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
  std::string name;  // "kvstore_device"
  // A method that makes its own transfers names the --comm alias that stands for it (MXNet's
  // kvstore=device was the study's "p2p"), which is also the collective algorithm of its
  // transfers; empty: it runs whichever algorithm the run names (--algo).
  std::string comm_alias;
  std::string summary;  // one line for listings and --help
  std::unique_ptr<ExchangeMethod> (*make)(ExchangeSettings);
};

const std::vector<ExchangeMethodEntry>& exchange_methods();
std::vector<std::string> exchange_method_names();
// Throws ConfigError "unknown exchange method 'kvstore_devce' (did you mean 'kvstore_device'?)"
// blaming `named_at`.
const ExchangeMethodEntry& find_exchange_method(std::string_view name, const Origin& named_at = {});

}  // namespace gpuscale::sim
