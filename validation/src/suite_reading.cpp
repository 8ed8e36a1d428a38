#include "validation/src/suite_reading.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "topologies/core/config_reader.hpp"

namespace gpuscale::validation {
namespace {

std::vector<std::string> study_names(const std::vector<NameMapping>& mappings) {
  std::vector<std::string> names;
  for (const NameMapping& m : mappings) names.push_back(m.study);
  return names;
}

int integer_of(const ConfigNode& node, std::string_view what, const std::vector<int>& allowed,
               std::string_view setup_key) {
  const int value = static_cast<int>(read_integer(node, what, 1, 1 << 20));
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    throw ConfigError(node.origin(),
                      fmt::format("{} {} is not one the suite's setup runs (setup.{}: {})", what,
                                  value, setup_key, fmt::join(allowed, ", ")));
  }
  return value;
}

}  // namespace

std::string SuiteNames::network(const ConfigNode& node) const {
  return read_one_of(node, "network", study_names(suite_.networks));
}

std::string SuiteNames::method(const ConfigNode& node) const {
  return read_one_of(node, "method", study_names(suite_.methods));
}

int SuiteNames::gpus(const ConfigNode& node) const { return gpus(node, ""); }

int SuiteNames::gpus(const ConfigNode& node, const std::string& machine) const {
  if (machine.empty()) return integer_of(node, "GPU count", suite_.setup.gpus, "gpus");
  const int value = static_cast<int>(read_integer(node, "GPU count", 1, 1 << 20));
  const std::vector<int> allowed = suite_.setup.machine(machine).gpus;
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    throw ConfigError(node.origin(), fmt::format("GPU count {} is not one machine {} runs (its "
                                                 "gpus: {})",
                                                 value, machine, fmt::join(allowed, ", ")));
  }
  return value;
}

std::string SuiteNames::machine(const ConfigNode& node) const {
  std::vector<std::string> names;
  for (const Machine& m : suite_.setup.machines) names.push_back(m.name);
  if (names.empty()) {
    throw ConfigError(node.origin(), "the suite declares no machines: give them in suite.yaml's "
                                     "`machines`, or remove this one");
  }
  return read_one_of(node, "machine", names);
}

int SuiteNames::batch(const ConfigNode& node) const {
  return integer_of(node, "batch", suite_.setup.batches, "batches");
}

std::vector<std::string> SuiteNames::networks(const ConfigNode& node) const {
  std::vector<std::string> names;
  for (const ConfigNode* item : items_or_one(node, "networks")) names.push_back(network(*item));
  return names;
}

std::vector<std::string> SuiteNames::methods(const ConfigNode& node) const {
  std::vector<std::string> names;
  for (const ConfigNode* item : items_or_one(node, "methods")) names.push_back(method(*item));
  return names;
}

std::vector<int> SuiteNames::gpu_counts(const ConfigNode& node,
                                        const std::string& machine) const {
  std::vector<int> values;
  for (const ConfigNode* item : items_or_one(node, "GPU counts"))
    values.push_back(gpus(*item, machine));
  return values;
}

std::vector<std::string> SuiteNames::machines(const ConfigNode& node) const {
  std::vector<std::string> names;
  for (const ConfigNode* item : items_or_one(node, "machines")) names.push_back(machine(*item));
  return names;
}

std::vector<int> SuiteNames::batches(const ConfigNode& node) const {
  std::vector<int> values;
  for (const ConfigNode* item : items_or_one(node, "batches")) values.push_back(batch(*item));
  return values;
}

void SuiteNames::check_run(const std::string& network, const std::string& method,
                           std::optional<int> batch, const Origin& where) const {
  const std::vector<std::string> methods = suite_.methods_of(network);
  if (std::find(methods.begin(), methods.end(), method) == methods.end()) {
    throw ConfigError(where, fmt::format("network {} ran with {} only, not {} (suite.yaml's "
                                         "networks say)",
                                         network, fmt::join(methods, ", "), method));
  }
  const std::vector<int> batches = suite_.batches_of(network);
  if (batch && std::find(batches.begin(), batches.end(), *batch) == batches.end()) {
    throw ConfigError(where, fmt::format("network {} ran at batch{} {} only, not {} (suite.yaml's "
                                         "networks say)",
                                         network, batches.size() == 1 ? "" : "es",
                                         fmt::join(batches, ", "), *batch));
  }
}

void SuiteNames::check_on_machine(const std::string& network, const std::string& machine,
                                  const Origin& where) const {
  if (machine.empty()) return;
  const std::vector<std::string>& only = suite_.setup.machine(machine).networks;
  if (!only.empty() && std::find(only.begin(), only.end(), network) == only.end()) {
    throw ConfigError(where, fmt::format("network {} does not run on machine {} (its networks: "
                                         "{}; add it there)",
                                         network, machine, fmt::join(only, ", ")));
  }
}

std::string SuiteNames::twin(const std::string& network, const Origin& where) const {
  if (const std::string* found = suite_.find_twin(network)) return *found;
  throw ConfigError(where, fmt::format("no network is {} in another precision (give one "
                                       "`twin_of: {}` in suite.yaml's networks)",
                                       network, network));
}

std::optional<double> optional_number(const ConfigNode& node, std::string_view what, double min,
                                      double max) {
  if (node.is_scalar() && node.value().empty()) return std::nullopt;
  return read_number(node, what, min, max);
}

void check_text(const ConfigNode& node, std::string_view what) {
  if (node.is_map()) {
    throw ConfigError(node.origin(), fmt::format("{} must be text or a list of text", what));
  }
  for (const ConfigNode& item : node.items()) read_string(item, what);
}

}  // namespace gpuscale::validation
