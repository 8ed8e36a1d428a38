// What the YAML reader refuses, and where it says so: each of these inputs once crashed gpuscale,
// exhausted its memory or was read silently wrong (issue 19).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/test_support.hpp"
#include "topologies/core/config_tree.hpp"
#include "topologies/core/yaml_document.hpp"

namespace gpuscale {
namespace {

using ::testing::StartsWith;
using testing::config_error_of;

std::string error_reading(const std::string& text) {
  return config_error_of([&] { parse_yaml_document(text, "f.yaml"); });
}

TEST(YamlDocument, NullsAndNestingReadAsBefore) {
  const ConfigNode doc = parse_yaml_document("a:\nb: [~, 1]\nc: {d: {e: x}}\n", "f.yaml");
  EXPECT_TRUE(doc.find("a")->is_scalar());
  EXPECT_EQ(doc.find("a")->value(), "");
  EXPECT_EQ(doc.find("a")->origin().str(), "f.yaml:1");
  EXPECT_TRUE(doc.find("b")->items()[0].is_null());
  EXPECT_EQ(doc.find("c")->find("d")->find("e")->value(), "x");
  EXPECT_EQ(doc.find("c")->find("d")->find("e")->origin().str(), "f.yaml:3");
  EXPECT_TRUE(parse_yaml_document("# only a comment\n", "f.yaml").is_null());
}

TEST(YamlDocument, AliasesAndAnchorsAreRefusedWhereWritten) {
  EXPECT_THAT(error_reading("a: 1\nb: &x [1, 2]\n"), StartsWith("f.yaml:2: YAML anchors"));
  // A self-reference would never end; a bomb of nested aliases would grow exponentially.
  EXPECT_THAT(error_reading("a: &a [*a]\n"), StartsWith("f.yaml:1: YAML anchors"));
  EXPECT_THAT(error_reading("a: [1]\nb: [*a, *a]\n"), StartsWith("f.yaml:2:"));
}

TEST(YamlDocument, ASecondDocumentIsRefused) {
  EXPECT_THAT(error_reading("---\na: 1\n---\na: 2\n"),
              StartsWith("f.yaml:3: a second YAML document starts here"));
  EXPECT_NO_THROW(parse_yaml_document("---\na: 1\n...\n", "f.yaml"));
}

TEST(YamlDocument, BytesThatAreNotUtf8AreRefusedWithTheirLine) {
  EXPECT_EQ(error_reading("a: 1\nname: caf\xE9\n"),
            "f.yaml:2: byte 0xE9 is not UTF-8: save the file as UTF-8");
  EXPECT_THAT(error_reading("a: \xC0\xAF\n"), StartsWith("f.yaml:1: byte 0xC0"));  // overlong
  EXPECT_THAT(error_reading("a: \xED\xA0\x80\n"), StartsWith("f.yaml:1: byte 0xED"));  // surrogate
  EXPECT_THAT(error_reading("a: \xE2\x82\n"), StartsWith("f.yaml:1: byte 0xE2"));  // cut short
  EXPECT_EQ(parse_yaml_document("name: caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x9A\x80\n", "f.yaml")
                .find("name")
                ->value(),
            "caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x9A\x80");
}

TEST(YamlDocument, ATabInTheIndentationIsRefusedButNotInAValue) {
  EXPECT_EQ(error_reading("a:\n\t- 1\n"),
            "f.yaml:2: a tab in the indentation: YAML indents with spaces (replace the tab)");
  EXPECT_THAT(error_reading("a:\n  \tb: 1\n"), StartsWith("f.yaml:2: a tab"));
  EXPECT_EQ(parse_yaml_document("a: \"x\ty\"  # a\ttab\n\t\n", "f.yaml").find("a")->value(),
            "x\ty");
}

TEST(YamlDocument, DepthValuesAndSizeAreBounded) {
  const std::string deep = "a: " + std::string(5000, '[') + std::string(5000, ']') + "\n";
  EXPECT_THAT(error_reading(deep), StartsWith("f.yaml:1: nested more than 64 levels deep"));
  std::string nested = "a: ";
  for (int i = 1; i < kMaxYamlDepth; ++i) nested += "[";
  nested += std::string(kMaxYamlDepth - 1, ']') + "\n";
  EXPECT_NO_THROW(parse_yaml_document(nested, "f.yaml"));

  std::string many = "a: [";
  for (std::size_t i = 0; i < kMaxYamlValues; ++i) many += "0,";
  many += "0]\n";
  EXPECT_THAT(error_reading(many), StartsWith("f.yaml:1: more than 1000000 values"));
  EXPECT_THAT(error_reading(std::string(kMaxYamlBytes + 1, '#')),
              StartsWith("f.yaml: 8.0 MiB is more than gpuscale reads from one file"));
}

TEST(YamlDocument, KeysMustBePlainAndGivenOnce) {
  EXPECT_THAT(error_reading("a: 1\nb: 2\na: 3\n"), StartsWith("f.yaml:3: key 'a' is given twice"));
  EXPECT_THAT(error_reading("? [1, 2]\n: 3\n"), StartsWith("f.yaml:1: a mapping key must be"));
  EXPECT_THAT(error_reading("~: 3\n"), StartsWith("f.yaml:1: a mapping key must be"));
}

TEST(YamlDocument, ALargeFileIsRefusedBeforeItIsRead) {
  const std::string path =
      testing::write_temp_file("large.yaml", std::string(kMaxYamlBytes + 1, '#'));
  EXPECT_EQ(config_error_of([&] { ConfigNode::load_file(path); }),
            path + ": larger than the 8 MiB gpuscale reads from one file: is this the right file?");
}

}  // namespace
}  // namespace gpuscale
