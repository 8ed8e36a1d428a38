// Reading a JSON request of `gpuscale serve`'s API (serve_api.hpp) as the CLI reads its flags:
// every key known, every value checked, shipped files named by name only, and each mistake a
// one-line ConfigError naming `request.KEY` and what to fix.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "topologies/core/config_tree.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/shipped_files.hpp"

namespace gpuscale::serve {

// A request's key, as its errors name it.
Origin request_key(const std::string& key);

// `body` as a JSON object of at most `max_bytes`, holding only `known` keys and every one of
// `required` (`what` says who requires them: "every run").
nlohmann::json read_request(const std::string& body, std::size_t max_bytes,
                            const std::vector<std::string>& known,
                            const std::vector<std::string>& required, const std::string& what);

std::string string_at(const nlohmann::json& request, const std::string& key);
std::vector<std::string> strings_at(const nlohmann::json& request, const std::string& key);
long integer_at(const nlohmann::json& request, const std::string& key, long low, long high);
// A list of 1 to `most` whole numbers from `low` to `high`.
std::vector<int> integers_at(const nlohmann::json& request, const std::string& key,
                             std::size_t most, int low, int high);
bool bool_at(const nlohmann::json& request, const std::string& key);

// `name` if `folder` ships it, never a path: the server reads no file outside its data tree.
// `what` names the folder's files in the error.
void check_shipped(const std::string& name, const std::string& key, const ShippedFolder& folder,
                   const std::string& what);
// The shipped name at `key`.
std::string shipped_name(const nlohmann::json& request, const std::string& key,
                         const ShippedFolder& folder);
// The name at `key` if it is one of `names`.
std::string one_of(const nlohmann::json& request, const std::string& key,
                   const std::vector<std::string>& names, const std::string& what);

// The machine a request runs on: a shipped one, its `set` changes (as `--set`), and what a
// `base:` file would change of it: `links` entries and a `variability` section.
struct MachineRequest {
  std::string name;
  std::vector<std::string> set;
  // The shipped machine with the links and the variability derived over it, as a `base:` file's
  // (docs/topology-schema.md): a links entry with the endpoints of a link changes it,
  // `remove: true` removes it, any other is a new link. Null when neither is given.
  std::shared_ptr<const ConfigNode> document;
};

// The keys a MachineRequest reads: machine, set, links, and variability if `with_variability`.
std::vector<std::string> machine_keys(bool with_variability);
// The request's machine, loaded once with its changes so that a bad one is reported here, at the
// request's key: `request.set:N` and `request.links:N` name the Nth entry, `request.variability`
// the section.
MachineRequest read_machine(const nlohmann::json& request);

}  // namespace gpuscale::serve
