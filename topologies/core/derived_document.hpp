// A document that may derive from another of its kind (`base: NAME`): the base is loaded first
// (found in the shipped folder or beside the file), recursively, and the file's own keys are
// merged over it (merge_into). Workload and framework files derive this way; topology files
// have their own rules for clusters (topologies/src/topology_document.cpp).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "topologies/core/config_tree.hpp"
#include "topologies/core/shipped_files.hpp"

namespace gpuscale {

// Called before the file's keys merge over its base's: may drop what the file replaces whole.
using BeforeMerge = std::function<void(ConfigNode& base, const ConfigNode& derived)>;

// Throws ConfigError at the file when it is no mapping (`mapping_example` says what it holds,
// "name:, input:, layers: ..."), and at `base:` for a chain too deep or circular.
ConfigNode load_derived_document(const std::string& path, const ShippedFolder& folder,
                                 std::string_view mapping_example,
                                 const BeforeMerge& before_merge = {});

}  // namespace gpuscale
