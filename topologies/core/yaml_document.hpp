// Reading one YAML document from bytes into a ConfigNode tree, refusing what gpuscale's inputs
// never need and what could make reading them unbounded.
//
// Contract: parse_yaml_document either returns the tree of the text's single document or throws
// one ConfigError naming the line, for
//  - text over kMaxYamlBytes, or holding more than kMaxYamlValues values or nesting deeper than
//    kMaxYamlDepth (an input that large is a mistake, and reading it could exhaust memory);
//  - bytes that are not UTF-8 (names end up in JSON and file names), a tab in a line's indentation;
//  - anchors and aliases (an alias bomb expands exponentially, a self-reference never ends;
//    `base:` is how one gpuscale file reuses another), and a second document (`---`);
//  - a mapping key that is not a plain name, or a key given twice in one mapping.
// The tree is built from yaml-cpp's parser events, without its node graph, so nothing is
// expanded and no recursion follows the input's depth.
#pragma once

#include <cstddef>
#include <string>

#include "topologies/core/config_tree.hpp"

namespace gpuscale {

inline constexpr std::size_t kMaxYamlBytes = std::size_t{8} << 20;
inline constexpr std::size_t kMaxYamlValues = 1'000'000;
inline constexpr int kMaxYamlDepth = 64;

// `name` stands in for the file name in origins and errors.
ConfigNode parse_yaml_document(const std::string& text, const std::string& name);

}  // namespace gpuscale
