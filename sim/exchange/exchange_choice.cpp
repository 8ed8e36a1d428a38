#include "sim/exchange/exchange_choice.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/collectives/registry.hpp"
#include "sim/exchange/registry.hpp"
#include "topologies/core/config_reader.hpp"

namespace gpuscale::sim {
namespace {

// The method a plain algorithm name stands for (--comm nccl_tree: --exchange allreduce --algo
// nccl_tree), and the separator of METHOD:ALGORITHM.
constexpr std::string_view kAllreduce = "allreduce";
constexpr char kBy = ':';

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The names a message lists: the aliases, then the methods.
std::vector<std::string> known_names() {
  std::vector<std::string> names = comm_alias_names();
  for (const std::string& method : exchange_method_names()) names.push_back(method);
  return names;
}

// A collective algorithm an allreduce may run, checked ("nccl" is nccl_ring, as on --comm).
std::string allreduce_algorithm(const std::string& algorithm, const Origin& named_at) {
  if (algorithm == "nccl") return "nccl_ring";
  const std::vector<std::string> names = coll::algorithms_implementing(coll::Collective::AllReduce);
  if (!contains(names, algorithm)) {
    throw ConfigError(named_at, unknown_name_message("allreduce algorithm", algorithm, names));
  }
  return algorithm;
}

// The method of METHOD:ALGORITHM, which must run the run's algorithm.
const ExchangeMethodEntry& method_taking_algorithm(const std::string& method,
                                                   const Origin& named_at) {
  const ExchangeMethodEntry& m = find_exchange_method(method, named_at);
  if (!m.own_algorithm.empty()) {
    throw ConfigError(named_at, fmt::format("exchange method '{}' runs its own transfers ({}): "
                                            "name it alone, without an algorithm",
                                            method, m.own_algorithm));
  }
  return m;
}

// The method that the alias `comm` stands for where the framework has it, if any.
const ExchangeMethodEntry* method_of_alias(const std::string& comm) {
  for (const ExchangeMethodEntry& m : exchange_methods()) {
    if (m.comm_alias == comm) return &m;
  }
  return nullptr;
}

// The exchange method and algorithm `name` asks for in `framework`.
ExchangeChoice parse(const std::string& name, const wl::FrameworkConfig& framework,
                     const Origin& named_at) {
  if (const size_t by = name.find(kBy); by != std::string::npos) {
    const ExchangeMethodEntry& m = method_taking_algorithm(name.substr(0, by), named_at);
    return {m.name, allreduce_algorithm(name.substr(by + 1), named_at), {}};
  }
  if (contains(exchange_method_names(), name)) {
    const ExchangeMethodEntry& m = find_exchange_method(name);
    return {name, m.own_algorithm.empty() ? "nccl_ring" : m.own_algorithm, {}};
  }
  if (!contains(comm_alias_names(), name)) {
    throw ConfigError(named_at, unknown_name_message("comm method", name, known_names()));
  }
  if (const ExchangeMethodEntry* m = method_of_alias(name);
      m && framework.has_exchange_method(m->name)) {
    return {m->name, m->own_algorithm, {}};
  }
  return {std::string(kAllreduce), algorithm_of_alias(name, named_at), {}};
}

// How outputs name `choice` in `framework`: the alias that resolves to it, else its method (a
// method that makes its own transfers) or METHOD:ALGORITHM.
std::string canonical_name(const ExchangeChoice& choice, const wl::FrameworkConfig& framework) {
  const ExchangeMethodEntry& m = find_exchange_method(choice.exchange);
  if (!m.comm_alias.empty()) return m.comm_alias;
  if (!m.own_algorithm.empty()) return m.name;
  const std::string alias = choice.algorithm == "nccl_ring" ? "nccl" : choice.algorithm;
  const ExchangeMethodEntry* claimed = method_of_alias(alias);
  if (m.name == kAllreduce &&
      !(claimed != nullptr && framework.has_exchange_method(claimed->name))) {
    return alias;
  }
  return m.name + kBy + choice.algorithm;
}

}  // namespace

std::vector<std::string> comm_alias_names() {
  std::vector<std::string> names;
  for (const std::string& a : coll::algorithms_implementing(coll::Collective::AllReduce)) {
    names.push_back(a == "nccl_ring" ? "nccl" : a);
  }
  return names;
}

std::string algorithm_of_alias(const std::string& comm, const Origin& named_at) {
  const std::vector<std::string> names = comm_alias_names();
  if (!contains(names, comm)) {
    throw ConfigError(named_at, unknown_name_message("comm method", comm, names));
  }
  return comm == "nccl" ? "nccl_ring" : comm;
}

void check_exchange_name(const std::string& name, const Origin& named_at) {
  if (const size_t by = name.find(kBy); by != std::string::npos) {
    method_taking_algorithm(name.substr(0, by), named_at);
    allreduce_algorithm(name.substr(by + 1), named_at);
  } else if (!contains(known_names(), name)) {
    throw ConfigError(named_at, unknown_name_message("comm method", name, known_names()));
  }
}

std::vector<std::string> exchange_names(const std::vector<std::string>& exchanges,
                                        const std::vector<std::string>& algorithms,
                                        const Origin& named_at) {
  const std::vector<std::string> methods =
      exchanges.empty() ? std::vector<std::string>{std::string(kAllreduce)} : exchanges;
  bool takes_algorithm = false;
  for (const std::string& e : methods) {
    takes_algorithm = takes_algorithm || find_exchange_method(e, named_at).own_algorithm.empty();
  }
  if (!algorithms.empty() && !takes_algorithm) {
    throw ConfigError(named_at,
                      "an algorithm is chosen for a method that runs one (allreduce): "
                      "the others run their own; drop the algorithm or add allreduce");
  }
  std::vector<std::string> names;
  for (const std::string& e : methods) {
    if (!find_exchange_method(e, named_at).own_algorithm.empty()) {
      names.push_back(e);
      continue;
    }
    for (const std::string& a :
         algorithms.empty() ? std::vector<std::string>{"nccl_ring"} : algorithms) {
      names.push_back(e + kBy + allreduce_algorithm(a, named_at));
    }
  }
  return names;
}

bool read_exchanges(const MapReader& map, std::vector<std::string>& names,
                    std::vector<Origin>& written_at) {
  const ConfigNode* comm = map.find("comm");
  const ConfigNode* exchange = map.find("exchange");
  const ConfigNode* algo = map.find("algo");
  if (comm != nullptr && (exchange != nullptr || algo != nullptr)) {
    throw ConfigError(comm->origin(),
                      "'comm' names an exchange and its algorithm in one name; "
                      "give it, or 'exchange' and 'algo', not both");
  }
  if (comm != nullptr) {
    for (const ConfigNode* item : items_or_one(*comm, "comm")) {
      names.push_back(read_string(*item, "comm method"));
      check_exchange_name(names.back(), item->origin());
      written_at.push_back(item->origin());
    }
    return true;
  }
  if (exchange == nullptr && algo == nullptr) return false;
  auto read_list = [](const ConfigNode* node, std::string_view what) {
    std::vector<std::string> values;
    if (node != nullptr) {
      for (const ConfigNode* item : items_or_one(*node, what))
        values.push_back(read_string(*item, what));
    }
    return values;
  };
  const Origin at = (exchange != nullptr ? exchange : algo)->origin();
  for (const std::string& name :
       exchange_names(read_list(exchange, "exchange"), read_list(algo, "algo"), at)) {
    names.push_back(name);
    written_at.push_back(at);
  }
  return true;
}

ExchangeChoice resolve_exchange(const std::string& name, const wl::FrameworkConfig& framework,
                                const Origin& named_at) {
  for (const auto& [method, listed_at] : framework.exchange_methods) {
    find_exchange_method(method, listed_at);
  }
  ExchangeChoice choice = parse(name, framework, named_at);
  if (!framework.has_exchange_method(choice.exchange)) {
    std::vector<std::string> has;
    for (const auto& [method, listed_at] : framework.exchange_methods) has.push_back(method);
    throw ConfigError(named_at, fmt::format("framework '{}' has no exchange method '{}' (it has: "
                                            "{}; {})",
                                            framework.name, choice.exchange, fmt::join(has, ", "),
                                            framework.file));
  }
  choice.name = canonical_name(choice, framework);
  return choice;
}

std::unique_ptr<ExchangeMethod> make_exchange(const ExchangeChoice& choice,
                                              const wl::FrameworkConfig& framework,
                                              const wl::AllreduceModel& allreduce,
                                              wl::ReducerPolicy reducers) {
  return find_exchange_method(choice.exchange)
      .make({&framework, allreduce, choice.algorithm, reducers});
}

}  // namespace gpuscale::sim
