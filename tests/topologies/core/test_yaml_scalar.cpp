// Strings and quantities written into files gpuscale reads back: what the writer emits, the
// reader returns unchanged (topologies/core/yaml_scalar.hpp, the fixed formats of
// topologies/core/units.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topologies/core/config_tree.hpp"
#include "topologies/core/units.hpp"
#include "topologies/core/yaml_scalar.hpp"

namespace gpuscale {
namespace {

TEST(YamlScalar, PlainOnlyWhenNoReaderCanMisreadIt) {
  EXPECT_EQ(yaml_scalar("H200-SXM"), "H200-SXM");
  EXPECT_EQ(yaml_scalar("NVIDIA H200"), "NVIDIA H200");
  EXPECT_EQ(yaml_scalar("13.0"), "\"13.0\"");              // a number to type-resolving readers
  EXPECT_EQ(yaml_scalar("2026-11-22"), "\"2026-11-22\"");  // a timestamp to YAML 1.1
  EXPECT_EQ(yaml_scalar("Off"), "\"Off\"");                // a boolean to YAML 1.1
  EXPECT_EQ(yaml_scalar(""), "\"\"");
  EXPECT_EQ(yaml_scalar("a, b"), "\"a, b\"");              // a comma ends a flow value
  EXPECT_EQ(yaml_scalar("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
}

TEST(YamlScalar, EveryStringReadsBackUnchangedAsValueFlowValueAndKey) {
  const std::vector<std::string> strings{
      "H200-SXM", "13.0", "", "yes", "null", "~", "a: b", "x #y", "[1]", "{a}", "-", "- a",
      "say \"hi\"", "back\\slash", "tab\there", "line\nbreak", "µs", " lead", "trail ", "*ref",
      "&anchor", "!tag", "%directive", "@at", "`tick`", "'single'", "?", "a,b"};
  for (const std::string& s : strings) {
    const std::string text = "block: " + yaml_scalar(s) + "\nflow: {x: " + yaml_scalar(s) +
                             "}\nkeys:\n  " + yaml_scalar(s) + ": 1\n";
    const ConfigNode doc = ConfigNode::load_string(text, "test.yaml");
    EXPECT_EQ(doc.find("block")->value(), s) << text;
    EXPECT_EQ(doc.find("flow")->find("x")->value(), s) << text;
    if (!s.empty()) {
      EXPECT_EQ(doc.find("keys")->entries().at(0).key, s) << text;
    }
  }
}

TEST(FixedFormats, HoldTheirResolutionAndDropTrailingZeros) {
  EXPECT_EQ(format_microseconds({310.125e-6}), "310.125 us");
  EXPECT_EQ(format_microseconds({550.2e-6}), "550.2 us");
  EXPECT_EQ(format_microseconds({0}), "0 us");
  EXPECT_EQ(format_microseconds({1.0000004e-6}), "1 us");  // below 1 ns
  EXPECT_EQ(format_microseconds({2.5}), "2500000 us");
  EXPECT_EQ(format_gigabytes_per_second({4300e9}), "4300 GB/s");
  EXPECT_EQ(format_gigabytes_per_second({55.1234e9}), "55.123 GB/s");
  EXPECT_EQ(format_megahertz({1980e6}), "1980 MHz");
  EXPECT_EQ(format_mebibytes({143771.0 * 1048576}), "143771 MiB");
  EXPECT_DOUBLE_EQ(parse_bytes(format_mebibytes({150754820096})).value, 150754820096);
  EXPECT_NEAR(parse_seconds(format_microseconds({0.000612345})).value, 0.000612345, 1e-15);
}

}  // namespace
}  // namespace gpuscale
