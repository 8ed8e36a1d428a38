// The config tree keeps each value's origin through `base:` merges and `--set` overrides, so
// that errors can still name the file and line, or the option, that supplied a value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/test_support.hpp"
#include "topologies/core/config_reader.hpp"
#include "topologies/core/config_tree.hpp"

namespace gpuscale {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::config_error_of;

TEST(ConfigTree, ValuesRememberTheirLine) {
  const ConfigNode doc = ConfigNode::load_string("a: 1\nb:\n  c: 25 GB/s\n  d: [x, y]\n", "f.yaml");
  ASSERT_TRUE(doc.is_map());
  EXPECT_EQ(doc.find("a")->origin().str(), "f.yaml:1");
  EXPECT_EQ(doc.find("b")->find("c")->origin().str(), "f.yaml:3");
  EXPECT_EQ(doc.find("b")->find("d")->items()[1].value(), "y");
}

TEST(ConfigTree, MergeKeepsBaseKeysAndOverlayOrigins) {
  ConfigNode base = ConfigNode::load_string("x: {p: 1, q: 2}\ny: 3\n", "base.yaml");
  const ConfigNode overlay = ConfigNode::load_string("x: {q: 20}\nz: 4\n", "derived.yaml");
  merge_into(base, overlay);
  EXPECT_EQ(base.find("x")->find("p")->value(), "1");
  EXPECT_EQ(base.find("x")->find("q")->value(), "20");
  EXPECT_EQ(base.find("x")->find("q")->origin().str(), "derived.yaml:1");
  EXPECT_EQ(base.find("y")->value(), "3");
  EXPECT_EQ(base.find("z")->value(), "4");
}

TEST(ConfigTree, OverrideReplacesAValueAndNamesTheOption) {
  ConfigNode doc = ConfigNode::load_string("cluster: {nodes: 4}\nl: [{n: 1}, {n: 2}]\n", "f.yaml");
  apply_override(doc, "cluster.nodes=128");
  apply_override(doc, "l.1.n=7");
  EXPECT_EQ(doc.find("cluster")->find("nodes")->value(), "128");
  EXPECT_EQ(doc.find("cluster")->find("nodes")->origin().str(), "--set cluster.nodes=128");
  EXPECT_EQ(doc.find("l")->items()[1].find("n")->value(), "7");
}

TEST(ConfigTree, OverrideErrorsNameTheOption) {
  ConfigNode doc = ConfigNode::load_string("a: {b: 1}\nl: [1, 2]\n", "f.yaml");
  EXPECT_THAT(config_error_of([&] { apply_override(doc, "a.b"); }),
              StartsWith("--set a.b: expected KEY=VALUE"));
  EXPECT_THAT(config_error_of([&] { apply_override(doc, "nope.b=1"); }),
              HasSubstr("no key 'nope'"));
  EXPECT_THAT(config_error_of([&] { apply_override(doc, "l.5=1"); }),
              HasSubstr("index from 0 to 1"));
  EXPECT_THAT(config_error_of([&] { apply_override(doc, "a=1"); }),
              HasSubstr("names a whole mapping"));
}

TEST(ConfigTree, DuplicateKeyAndMalformedYamlGiveTheLine) {
  EXPECT_THAT(config_error_of([] { ConfigNode::load_string("a: 1\nb: 2\na: 3\n", "f.yaml"); }),
              StartsWith("f.yaml:3: key 'a' is given twice"));
  EXPECT_THAT(config_error_of([] { ConfigNode::load_string("a: [1, 2\nb: 3\n", "f.yaml"); }),
              StartsWith("f.yaml:"));
}

TEST(ConfigReader, UnknownKeySuggestsTheNearestKnownOne) {
  const ConfigNode doc = ConfigNode::load_string("bandwith: 25 GB/s\n", "f.yaml");
  EXPECT_THAT(config_error_of([&] { MapReader(doc, "link x", {"bandwidth", "latency"}); }),
              StartsWith("f.yaml:1: unknown key 'bandwith' in link x (did you mean 'bandwidth'?)"));
  EXPECT_THAT(config_error_of([&] { MapReader(doc, "link x", {"lanes"}); }),
              HasSubstr("(known: lanes)"));
}

TEST(ConfigReader, TypedValuesCheckRangeAndUnit) {
  const ConfigNode doc =
      ConfigNode::load_string("n: 12\nf: 0.5\nbw: 25\nbad: 1.5x\n", "f.yaml");
  EXPECT_EQ(read_integer(*doc.find("n"), "n", 1, 100), 12);
  EXPECT_DOUBLE_EQ(read_number(*doc.find("f"), "f", 0, 1), 0.5);
  EXPECT_THAT(config_error_of([&] { read_integer(*doc.find("n"), "lanes", 1, 6); }),
              StartsWith("f.yaml:1: lanes is 12, outside 1..6"));
  EXPECT_THAT(config_error_of([&] { read_bandwidth(*doc.find("bw"), "bandwidth of x"); }),
              StartsWith("f.yaml:3: bandwidth of x: bandwidth '25' has no unit"));
  EXPECT_THAT(config_error_of([&] { read_integer(*doc.find("bad"), "n", 0, 9); }),
              HasSubstr("is not a whole number"));
  const ConfigNode big = ConfigNode::load_string("n: 99999999999999999999\n", "f.yaml");
  EXPECT_EQ(config_error_of([&] { read_integer(*big.find("n"), "lanes", 1, 6); }),
            "f.yaml:1: lanes is 99999999999999999999, outside 1..6 (choose a value in that range)");
}

TEST(ConfigReader, NamesAreBoundedAndThoseOfFoldersPlain) {
  const ConfigNode doc = ConfigNode::load_string(
      "shown: 'dgx1, \"fast\" links'\nlong: " + std::string(65, 'g') + "\nbad: '../x'\n",
      "f.yaml");
  EXPECT_EQ(read_name(*doc.find("shown"), "name"), "dgx1, \"fast\" links");
  EXPECT_THAT(config_error_of([&] { read_name(*doc.find("shown"), "name", NameUse::file); }),
              HasSubstr("may hold only letters, digits and '_-.+'"));
  EXPECT_THAT(config_error_of([&] { read_name(*doc.find("long"), "name"); }),
              StartsWith("f.yaml:2: name 'gggggggggggggggggggggggggggggggg...' has 65 characters"));
  EXPECT_THAT(config_error_of([&] { read_name(*doc.find("bad"), "name", NameUse::file); }),
              StartsWith("f.yaml:3: name '../x' may hold only"));
}

}  // namespace
}  // namespace gpuscale
