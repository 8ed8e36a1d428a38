// Reading the values of a suite's tables and claims that must name something the suite defines:
// a network or method of suite.yaml, a GPU count or batch of its setup. Each error names the
// file, the line and the names that would be accepted. Shared by suite_loader.cpp and
// claim_loader.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/core/config_tree.hpp"
#include "validation/src/suite.hpp"

namespace gpuscale::validation {

class SuiteNames {
 public:
  explicit SuiteNames(const Suite& suite) : suite_(suite) {}

  const Suite& suite() const { return suite_; }

  std::string network(const ConfigNode& node) const;
  std::string method(const ConfigNode& node) const;
  int gpus(const ConfigNode& node) const;   // one of setup.gpus
  // One of the GPU counts `machine` runs ("": the setup's).
  int gpus(const ConfigNode& node, const std::string& machine) const;
  std::string machine(const ConfigNode& node) const;  // one of the suite's machines
  int batch(const ConfigNode& node) const;  // one of setup.batches

  // A list, or one value as a list of one.
  std::vector<std::string> networks(const ConfigNode& node) const;
  std::vector<std::string> methods(const ConfigNode& node) const;
  std::vector<int> gpu_counts(const ConfigNode& node, const std::string& machine = "") const;
  std::vector<std::string> machines(const ConfigNode& node) const;
  std::vector<int> batches(const ConfigNode& node) const;

  // Throws, at `where`, unless `network` ran with `method` (at `batch`, if given): suite.yaml's
  // networks may name the methods and batches a network ran with.
  void check_run(const std::string& network, const std::string& method, std::optional<int> batch,
                 const Origin& where) const;
  // Throws, at `where`, unless the suite runs `network` on `machine` (its networks say).
  void check_on_machine(const std::string& network, const std::string& machine,
                        const Origin& where) const;
  // The network that is `network` in another precision; throws at `where` if there is none.
  std::string twin(const std::string& network, const Origin& where) const;

 private:
  const Suite& suite_;
};

// A number, or nullopt for `null` (which the config tree reads as an empty value).
std::optional<double> optional_number(const ConfigNode& node, std::string_view what, double min,
                                      double max);

// Documentation values (titles, interpretations, notes, sources): checked to be text, or lists
// of text, so that a misplaced mapping is still reported.
void check_text(const ConfigNode& node, std::string_view what);

}  // namespace gpuscale::validation
