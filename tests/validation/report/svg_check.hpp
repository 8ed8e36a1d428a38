// Checks the report tests share on SVG text, without an XML parser: the document's frame and
// that every element opened is closed.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>

namespace gpuscale::testing {

// Elements left open at the end (0 when balanced), or -1 when one closes that was never opened.
inline int unclosed_elements(const std::string& svg) {
  int open = 0;
  for (size_t start = svg.find('<'); start != std::string::npos;
       start = svg.find('<', start + 1)) {
    const size_t end = svg.find('>', start);
    if (end == std::string::npos) return -1;
    if (svg[start + 1] == '/') {
      if (--open < 0) return -1;
    } else if (svg[end - 1] != '/') {
      ++open;
    }
  }
  return open;
}

inline void expect_well_formed_svg(const std::string& svg, const std::string& what) {
  EXPECT_TRUE(svg.starts_with("<svg ")) << what;
  EXPECT_TRUE(svg.ends_with("</svg>\n")) << what;
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '<'), std::count(svg.begin(), svg.end(), '>'))
      << what;
  EXPECT_EQ(unclosed_elements(svg), 0) << what;
  // A number printed from NaN or infinity, as fmt writes them.
  EXPECT_FALSE(std::regex_search(svg, std::regex("[\\s,\"(]-?(nan|inf)[\\s,\")]"))) << what;
}

}  // namespace gpuscale::testing
