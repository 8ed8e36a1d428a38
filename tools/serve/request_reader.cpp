#include "tools/serve/request_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "topologies/src/topology_document.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::serve {

using Json = nlohmann::json;

Origin request_key(const std::string& key) { return Origin{"request." + key, 0}; }

namespace {

// A request is a few levels deep (a links entry: 3); deeper is no request of ours, and a value
// nested thousands deep would recurse as deep in whatever walks it.
constexpr std::size_t kMaxDepth = 16;

// How deep `value` nests, counted without recursion.
std::size_t depth_of(const Json& value) {
  std::size_t deepest = 0;
  std::vector<std::pair<const Json*, std::size_t>> pending = {{&value, 1}};
  while (!pending.empty()) {
    const auto [v, depth] = pending.back();
    pending.pop_back();
    deepest = std::max(deepest, depth);
    if (v->is_structured()) {
      for (const Json& child : *v) pending.emplace_back(&child, depth + 1);
    }
  }
  return deepest;
}

}  // namespace

Json read_request(const std::string& body, std::size_t max_bytes,
                  const std::vector<std::string>& known, const std::vector<std::string>& required,
                  const std::string& what) {
  if (body.size() > max_bytes) {
    throw ConfigError(Origin{"request", 0},
                      fmt::format("{} bytes, more than the {} a request may hold", body.size(),
                                  max_bytes));
  }
  Json request;
  try {
    request = Json::parse(body);
  } catch (const Json::parse_error& e) {
    throw ConfigError(Origin{"request", 0}, fmt::format("not JSON ({})", e.what()));
  }
  if (!request.is_object()) throw ConfigError(Origin{"request", 0}, "must be a JSON object");
  if (depth_of(request) > kMaxDepth) {
    throw ConfigError(Origin{"request", 0},
                      fmt::format("nested more than {} deep: no request is", kMaxDepth));
  }
  for (const auto& [key, value] : request.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw ConfigError(request_key(key),
                        fmt::format("unknown key (known: {})", fmt::join(known, ", ")));
    }
  }
  for (const std::string& key : required) {
    if (!request.contains(key))
      throw ConfigError(request_key(key), fmt::format("missing: {} names it", what));
  }
  return request;
}

std::string string_at(const Json& request, const std::string& key) {
  const Json& value = request.at(key);
  if (!value.is_string()) throw ConfigError(request_key(key), "must be a string");
  return value.get<std::string>();
}

std::vector<std::string> strings_at(const Json& request, const std::string& key) {
  const Json& value = request.at(key);
  std::vector<std::string> out;
  if (!value.is_array()) throw ConfigError(request_key(key), "must be a list of strings");
  for (const Json& item : value) {
    if (!item.is_string()) throw ConfigError(request_key(key), "must be a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

namespace {

long whole_number(const Json& value, const std::string& key, long low, long high) {
  if (!value.is_number_integer() || value.get<long>() < low || value.get<long>() > high) {
    throw ConfigError(request_key(key), fmt::format("{} is not a whole number from {} to {}",
                                                    value.dump(), low, high));
  }
  return value.get<long>();
}

}  // namespace

long integer_at(const Json& request, const std::string& key, long low, long high) {
  return whole_number(request.at(key), key, low, high);
}

std::vector<int> integers_at(const Json& request, const std::string& key, std::size_t most,
                             int low, int high) {
  const Json& value = request.at(key);
  if (!value.is_array() || value.empty() || value.size() > most) {
    throw ConfigError(request_key(key), fmt::format("must be a list of 1 to {} numbers", most));
  }
  std::vector<int> out;
  for (const Json& item : value)
    out.push_back(static_cast<int>(whole_number(item, key, low, high)));
  return out;
}

bool bool_at(const Json& request, const std::string& key) {
  const Json& value = request.at(key);
  if (!value.is_boolean()) throw ConfigError(request_key(key), "must be true or false");
  return value.get<bool>();
}

void check_shipped(const std::string& name, const std::string& key, const ShippedFolder& folder,
                   const std::string& what) {
  const std::vector<std::string> names = folder.names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw ConfigError(request_key(key), fmt::format("'{}' is no shipped {} (shipped: {})", name,
                                                    what, fmt::join(names, ", ")));
  }
}

std::string shipped_name(const Json& request, const std::string& key, const ShippedFolder& folder) {
  std::string name = string_at(request, key);
  check_shipped(name, key, folder, folder.what());
  return name;
}

std::string one_of(const Json& request, const std::string& key,
                   const std::vector<std::string>& names, const std::string& what) {
  std::string name = string_at(request, key);
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw ConfigError(request_key(key), fmt::format("'{}' is no {} (known: {})", name, what,
                                                    fmt::join(names, ", ")));
  }
  return name;
}

std::vector<std::string> machine_keys(bool with_variability) {
  std::vector<std::string> keys = {"machine", "set", "links"};
  if (with_variability) keys.push_back("variability");
  return keys;
}

namespace {

// The links and variability of `request` derived over the shipped machine `name`; null when it
// gives neither (an empty list of links is none).
std::shared_ptr<const ConfigNode> changed_machine(const std::string& name, const Json& request) {
  const Json no_links = Json::array();
  const Json& links = request.contains("links") ? request["links"] : no_links;
  if (!links.is_array())
    throw ConfigError(request_key("links"), "must be a list of links ({a, b, ...})");
  if (links.empty() && !request.contains("variability")) return nullptr;
  ConfigNode own = ConfigNode::map(request_key("machine"));
  own.set("base", ConfigNode::scalar(name, request_key("machine")));
  if (!links.empty()) {
    std::string entries;
    for (const Json& link : links) {
      if (!link.is_object()) {
        throw ConfigError(request_key("links"),
                          fmt::format("{} is no link: each is an object such as {{\"a\": "
                                      "\"gpu0\", \"b\": \"gpu5\", \"kind\": \"nvlink\", "
                                      "\"lanes\": 1}}",
                                      link.dump()));
      }
      entries += "- " + link.dump() + "\n";  // JSON is YAML, an entry per line
    }
    own.set("links", ConfigNode::load_string(entries, "request.links"));
  }
  if (request.contains("variability")) {
    if (!request["variability"].is_object()) {
      throw ConfigError(request_key("variability"),
                        "must be an object, as a machine file's variability: section "
                        "({\"compute\": {\"distribution\": \"normal\", \"cv\": 0.05, "
                        "\"source\": \"...\"}})");
    }
    own.set("variability",
            ConfigNode::load_string(request["variability"].dump(), "request.variability"));
  }
  return std::make_shared<const ConfigNode>(topo::resolve_base(std::move(own), ""));
}

}  // namespace

MachineRequest read_machine(const Json& request) {
  MachineRequest m;
  m.name = shipped_name(request, "machine", topo::shipped_topologies());
  if (request.contains("set")) m.set = strings_at(request, "set");
  m.document = changed_machine(m.name, request);
  std::vector<Override> written;
  for (std::size_t i = 0; i < m.set.size(); ++i)
    written.push_back({m.set[i], Origin{"request.set", static_cast<int>(i + 1)}});
  if (m.document) {
    topo::load_topology_config_with(*m.document, m.name, written);
  } else {
    topo::load_topology_config_with(m.name, written);
  }
  return m;
}

}  // namespace gpuscale::serve
