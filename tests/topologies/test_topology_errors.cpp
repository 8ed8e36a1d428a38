// Every kind of bad topology input (docs/topology-schema.md) ends in a gpuscale::ConfigError whose
// message is one line, "FILE:LINE: what is wrong (how to fix)", that names the file and line at
// fault: malformed YAML, unknown or repeated keys, bad endpoints, kinds, units and ranges, invalid
// machines (ports, connectivity, no GPU, no route), `base:` chains, `--set` overrides (blamed as
// "--set KEY=VALUE") and clusters. Each input is a small file written to a temporary folder and
// taken through the whole path a run takes: load, build, check every route.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "tests/support/test_support.hpp"
#include "topologies/src/routing.hpp"
#include "topologies/src/topology.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::topo {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Matcher;
using ::testing::Not;
using ::testing::StartsWith;
using testing::config_error_of;
using testing::write_temp_file;

// Two V100s joined by NVLink; tests replace one line of it.
//   1 name    3 nvlink figures   5 gpu0   6 gpu1   8 the link
constexpr const char* kPair = R"(name: pair
link_kinds:
  nvlink: {lane_bandwidth: 25 GB/s, latency: 0.3 us}
devices:
  gpu0: {kind: gpu, model: V100, memory: 16 GB}
  gpu1: {kind: gpu, model: V100, memory: 16 GB}
links:
  - {a: gpu0, b: gpu1, kind: nvlink, lanes: 2}
)";

// kPair with its 1-based line `line` replaced by `text`.
std::string pair_with_line(int line, const std::string& text) {
  std::string out;
  std::string_view rest = kPair;
  for (int n = 1; !rest.empty(); ++n) {
    const auto end = rest.find('\n');
    out += n == line ? text : std::string(rest.substr(0, end));
    out += '\n';
    rest.remove_prefix(end + 1);
  }
  return out;
}

// A node with two GPUs and one NIC, for clusters; cluster files refer to it as `node.yaml`.
constexpr const char* kNode = R"(name: node
link_kinds:
  nvlink: {lane_bandwidth: 25 GB/s, latency: 0.3 us}
  pcie: {lane_bandwidth: 1 GB/s, latency: 0.1 us}
devices:
  gpu0: {kind: gpu, model: V100, memory: 16 GB}
  gpu1: {kind: gpu, model: V100, memory: 16 GB}
  nic0: {kind: nic}
links:
  - {a: gpu0, b: gpu1, kind: nvlink, lanes: 2}
  - {a: gpu0, b: nic0, kind: pcie, lanes: 16}
  - {a: gpu1, b: nic0, kind: pcie, lanes: 16}
)";

// A cluster of kNode: 1 name   3 node   4 nodes   7 rails   9 switch_radix
std::string cluster_text(int nodes, int rails, int radix) {
  return "name: c\n"
         "cluster:\n"
         "  node: node.yaml\n"
         "  nodes: " + std::to_string(nodes) + "\n"
         "  network:\n"
         "    topology: fat_tree\n"
         "    rails: " + std::to_string(rails) + "\n"
         "    taper: 1\n"
         "    switch_radix: " + std::to_string(radix) + "\n"
         "    switch_latency: 90 ns\n"
         "    link: {kind: infiniband, lanes: 4}\n"
         "link_kinds:\n"
         "  infiniband: {lane_bandwidth: 25 Gb/s, latency: 0.1 us}\n";
}

// Takes a topology file the way a run does: load, build, check every route in its own mode.
void load_build_route(const std::string& path, const std::vector<std::string>& overrides = {}) {
  const Topology t = Topology::build(load_topology_config(path, overrides));
  Router(t, t.default_routing()).check_all_pairs();
}

struct Failure {
  std::string path;     // the file written
  std::string message;  // what the ConfigError said
};

Failure fail(const std::string& file, const std::string& text,
             const std::vector<std::string>& overrides = {}) {
  const std::string path = write_temp_file(file, text);
  return {path, config_error_of([&] { load_build_route(path, overrides); })};
}

std::string at(const std::string& path, int line) { return path + ":" + std::to_string(line); }

// One line that starts with "WHERE: " and says `phrase`.
Matcher<const std::string&> ErrorAt(const std::string& where, const std::string& phrase) {
  return AllOf(StartsWith(where + ": "), HasSubstr(phrase), Not(HasSubstr("\n")));
}

// --- YAML ------------------------------------------------------------------------------------

TEST(TopologyErrors, BadIndentationNamesItsLine) {
  const Failure f = fail("bad-indent.yaml", pair_with_line(6, " gpu1: {kind: gpu}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 6), "malformed YAML"));
}

TEST(TopologyErrors, UnclosedBracketIsMalformedYaml) {
  const Failure f = fail("unclosed.yaml",
                         pair_with_line(5, "  gpu0: {kind: gpu, model: V100, memory: 16 GB"));
  // yaml-cpp notices the missing '}' on the line after the one that opens it.
  EXPECT_THAT(f.message, AnyOf(ErrorAt(at(f.path, 5), "malformed YAML"),
                               ErrorAt(at(f.path, 6), "malformed YAML")));
}

TEST(TopologyErrors, KeyGivenTwiceNamesTheSecond) {
  const Failure f = fail("twice.yaml", pair_with_line(6, "  gpu0: {kind: gpu, model: V100, "
                                                         "memory: 32 GB}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 6), "key 'gpu0' is given twice"));
}

TEST(TopologyErrors, FileThatIsNotAMapping) {
  const Failure f = fail("list.yaml", "- gpu0\n- gpu1\n");
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 1), "must be a mapping"));
}

// --- Keys ------------------------------------------------------------------------------------

TEST(TopologyErrors, UnknownTopLevelKeySuggestsTheNearest) {
  const Failure f = fail("top-key.yaml", std::string(kPair) + "linkz: []\n");
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 9), "unknown key 'linkz' in topology (did you mean "
                                                "'links'?)"));
}

TEST(TopologyErrors, UnknownTopLevelKeyFarFromAnyListsTheKnownOnes) {
  const Failure f = fail("top-key-far.yaml", std::string(kPair) + "colour: green\n");
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 9), "unknown key 'colour' in topology (known: name, "
                                                "description, routing"));
}

TEST(TopologyErrors, UnknownTopLevelKeyNamesTheKeyLineNotItsValue) {
  // A block value starts on the line after its key; the error should point at the key.
  const Failure f = fail("top-key-block.yaml", pair_with_line(7, "linkz:"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 7), "unknown key 'linkz'"));
}

TEST(TopologyErrors, UnknownKeyInDeviceSuggestsTheNearest) {
  const Failure f = fail("device-key.yaml",
                         pair_with_line(6, "  gpu1: {kind: gpu, modle: V100, memory: 16 GB}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 6), "unknown key 'modle' in device gpu1 (did you mean "
                                                "'model'?)"));
}

TEST(TopologyErrors, UnknownKeyInLinkSuggestsTheNearest) {
  const Failure f = fail("link-key.yaml", pair_with_line(8, R"(  - a: gpu0
    b: gpu1
    kind: nvlink
    lanes: 2
    lane_bandwith: 50 GB/s)"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 12), "unknown key 'lane_bandwith' in link gpu0-gpu1 "
                                                 "(did you mean 'lane_bandwidth'?)"));
}

TEST(TopologyErrors, UnknownKeyInLinkKindSuggestsTheNearest) {
  const Failure f = fail("kind-key.yaml", pair_with_line(3, "  nvlink: {lane_bandwidth: 25 GB/s, "
                                                            "latency: 0.3 us, eficiency: 0.9}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 3), "unknown key 'eficiency' in link kind 'nvlink' "
                                                "(did you mean 'efficiency'?)"));
}

// --- Links -----------------------------------------------------------------------------------

TEST(TopologyErrors, UnknownEndpointSuggestsTheNearestDevice) {
  const Failure f =
      fail("endpoint.yaml", pair_with_line(8, "  - {a: gpu0, b: gpu_1, kind: nvlink, lanes: 2}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 8), "unknown endpoint 'gpu_1' (did you mean "
                                                "'gpu1'?)"));
}

TEST(TopologyErrors, LinkWithoutEndpoints) {
  const Failure f = fail("no-b.yaml", pair_with_line(8, "  - {a: gpu0, kind: nvlink, lanes: 2}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 8), "needs its endpoints 'a' and 'b'"));
}

TEST(TopologyErrors, LinkJoiningADeviceToItself) {
  const Failure f =
      fail("self.yaml", pair_with_line(8, "  - {a: gpu0, b: gpu0, kind: nvlink, lanes: 2}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 8), "link gpu0-gpu0 joins gpu0 to itself"));
}

TEST(TopologyErrors, LinkDeclaredTwiceNamesTheSecond) {
  const Failure f = fail("dup-link.yaml", std::string(kPair) +
                                              "  - {a: gpu1, b: gpu0, kind: nvlink, lanes: 1}\n");
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 9), "link gpu1-gpu0 is declared twice"));
}

TEST(TopologyErrors, UnknownLinkKind) {
  const Failure f =
      fail("link-kind.yaml", pair_with_line(8, "  - {a: gpu0, b: gpu1, kind: nvlnk, lanes: 2}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 8), "unknown link kind 'nvlnk' (did you mean 'nvlink'?)"));
}

TEST(TopologyErrors, UnknownLinkKindUnderLinkKinds) {
  const Failure f = fail("kinds-kind.yaml",
                         pair_with_line(3, "  nvlnk: {lane_bandwidth: 25 GB/s, latency: 0.3 us}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 3), "unknown link kind 'nvlnk'"));
}

TEST(TopologyErrors, LinkKindWithoutFigures) {
  const Failure f =
      fail("no-figures.yaml", pair_with_line(8, "  - {a: gpu0, b: gpu1, kind: pcie, lanes: 16}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 8), "link kind 'pcie' has no figures (add "
                                                "link_kinds:"));
}

TEST(TopologyErrors, ZeroLanes) {
  const Failure f =
      fail("lanes0.yaml", pair_with_line(8, "  - {a: gpu0, b: gpu1, kind: nvlink, lanes: 0}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 8), "lanes of link gpu0-gpu1 is 0, outside 1.."));
}

TEST(TopologyErrors, LanesNotAnInteger) {
  const Failure f = fail("lanes-half.yaml",
                         pair_with_line(8, "  - {a: gpu0, b: gpu1, kind: nvlink, lanes: 1.5}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 8), "lanes of link gpu0-gpu1 '1.5' is not a whole "
                                                "number"));
}

TEST(TopologyErrors, LanesGivenAsAList) {
  const Failure f = fail("lanes-list.yaml",
                         pair_with_line(8, "  - {a: gpu0, b: gpu1, kind: nvlink, lanes: [1, 2]}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 8), "must be a single value, not a list"));
}

// --- Figures ---------------------------------------------------------------------------------

TEST(TopologyErrors, NegativeBandwidth) {
  const Failure f = fail(
      "bw-neg.yaml", pair_with_line(3, "  nvlink: {lane_bandwidth: -25 GB/s, latency: 0.3 us}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 3), "lane_bandwidth of link kind 'nvlink': bandwidth "
                                                "'-25 GB/s' is negative"));
}

TEST(TopologyErrors, BandwidthWithoutUnit) {
  const Failure f =
      fail("bw-bare.yaml", pair_with_line(3, "  nvlink: {lane_bandwidth: 25, latency: 0.3 us}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 3), "bandwidth '25' has no unit (write e.g. "
                                                "'25 GB/s')"));
}

TEST(TopologyErrors, BandwidthWithUnknownUnit) {
  const Failure f = fail("bw-unit.yaml", pair_with_line(3, "  nvlink: {lane_bandwidth: 25 GB/sec, "
                                                           "latency: 0.3 us}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 3), "has unknown unit 'GB/sec' (known: B/s"));
}

TEST(TopologyErrors, ZeroBandwidthOnALink) {
  const Failure f = fail("bw-zero.yaml", pair_with_line(8, "  - {a: gpu0, b: gpu1, kind: nvlink, "
                                                           "lanes: 2, lane_bandwidth: 0 GB/s}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 8), "lane_bandwidth of link gpu0-gpu1 must be "
                                                "positive"));
}

TEST(TopologyErrors, BandwidthThatIsNotANumber) {
  const Failure f =
      fail("bw-word.yaml", pair_with_line(3, "  nvlink: {lane_bandwidth: fast, latency: 0.3 us}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 3), "'fast' is not a number with a unit"));
}

TEST(TopologyErrors, NegativeLatency) {
  const Failure f = fail(
      "lat-neg.yaml", pair_with_line(3, "  nvlink: {lane_bandwidth: 25 GB/s, latency: -0.3 us}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 3), "latency of link kind 'nvlink': time '-0.3 us' is "
                                                "negative"));
}

TEST(TopologyErrors, NegativeDeviceLatency) {
  const Failure f = fail("dev-lat.yaml", pair_with_line(6, "  gpu1: {kind: gpu, model: V100, "
                                                           "memory: 16 GB, latency: -5 ns}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 6), "latency of device gpu1: time '-5 ns' is "
                                                "negative"));
}

TEST(TopologyErrors, LinkKindWithoutLatency) {
  const Failure f = fail("no-lat.yaml", pair_with_line(3, "  nvlink: {lane_bandwidth: 25 GB/s}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 3), "link kind 'nvlink' lacks 'latency'"));
}

TEST(TopologyErrors, EfficiencyAboveOne) {
  const Failure f = fail("eff-high.yaml", pair_with_line(8, "  - {a: gpu0, b: gpu1, kind: nvlink, "
                                                            "lanes: 2, efficiency: 1.5}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 8), "efficiency of link gpu0-gpu1 is 1.5, outside "
                                                "0.01..1"));
}

TEST(TopologyErrors, NegativeEfficiency) {
  const Failure f = fail("eff-neg.yaml", pair_with_line(3, "  nvlink: {lane_bandwidth: 25 GB/s, "
                                                           "latency: 0.3 us, efficiency: -0.5}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 3), "efficiency of link kind 'nvlink' is -0.5, "
                                                "outside"));
}

// --- Devices ---------------------------------------------------------------------------------

TEST(TopologyErrors, UnknownDeviceKind) {
  const Failure f = fail("dev-kind.yaml",
                         pair_with_line(6, "  gpu1: {kind: gpuu, model: V100, memory: 16 GB}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 6), "unknown device kind 'gpuu' (did you mean 'gpu'?)"));
}

TEST(TopologyErrors, GpuWithoutMemory) {
  const Failure f = fail("no-mem.yaml", pair_with_line(6, "  gpu1: {kind: gpu, model: V100}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 6), "device gpu1 lacks 'memory' (add e.g. 'memory: "
                                                "16 GB')"));
}

TEST(TopologyErrors, BadDeviceName) {
  const Failure f = fail("dev-name.yaml",
                         pair_with_line(6, "  GPU1: {kind: gpu, model: V100, memory: 16 GB}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 6), "device name 'GPU1' may hold only"));
}

TEST(TopologyErrors, MoreLanesThanPortsNamesTheDevice) {
  const Failure f =
      fail("ports.yaml", pair_with_line(5, "  gpu0: {kind: gpu, model: V100, memory: 16 GB, "
                                           "ports: {nvlink: 1}}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 5), "device gpu0 has 2 nvlink lanes in its links but "
                                                "1 in its ports"));
}

TEST(TopologyErrors, DisconnectedGpuNamesItsLine) {
  const Failure f = fail("island.yaml", pair_with_line(6, "  gpu1: {kind: gpu, model: V100, "
                                                          "memory: 16 GB}\n  gpu2: {kind: gpu, "
                                                          "model: V100, memory: 16 GB}"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 7), "device gpu2 is not connected to gpu0"));
}

TEST(TopologyErrors, MachineWithoutGpuNamesTheFile) {
  const Failure f = fail("no-gpu.yaml", R"(name: sockets
link_kinds:
  qpi: {lane_bandwidth: 19.2 GB/s, latency: 0.1 us}
devices:
  cpu0: {kind: cpu}
  cpu1: {kind: cpu}
links:
  - {a: cpu0, b: cpu1, kind: qpi, lanes: 2}
)");
  EXPECT_THAT(f.message, ErrorAt(f.path, "the machine has no GPU (add a device of kind gpu)"));
}

TEST(TopologyErrors, NoDevicesAtAll) {
  const Failure f = fail("empty.yaml", "name: nothing\n");
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 1), "topology lacks 'devices'"));
}

// --- Routing ---------------------------------------------------------------------------------

TEST(TopologyErrors, UnknownRoutingMode) {
  const Failure f = fail("routing.yaml", pair_with_line(2, "routing: two_hop\nlink_kinds:"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 2), "unknown routing mode 'two_hop' (known: direct"));
}

TEST(TopologyErrors, GpuWithoutRouteUnderPcieRouting) {
  const Failure f = fail("nvlink-only.yaml", pair_with_line(2, "routing: pcie\nlink_kinds:"));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 6), "gpu0 has no route to gpu1 under routing 'pcie'"));
}

TEST(TopologyErrors, RouterCheckNamesTheSourceGpu) {
  const std::string path = write_temp_file("nvlink-only-router.yaml", kPair);
  const Topology t = Topology::build(load_topology_config(path));
  EXPECT_THAT(config_error_of([&] { Router(t, RoutingMode::Pcie).check_all_pairs(); }),
              ErrorAt(at(path, 5), "gpu0 has no route to gpu1 under routing 'pcie' (no path "
                                   "without NVLink"));
}

// --- Files and `base:` ------------------------------------------------------------------------

TEST(TopologyErrors, MissingFileNamesThePath) {
  const std::string path = write_temp_file("exists.yaml", kPair) + ".missing.yaml";
  const std::string message = config_error_of([&] { load_build_route(path); });
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr("check the path"));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
}

TEST(TopologyErrors, MissingFileStartsWithThePath) {
  const std::string path = write_temp_file("exists2.yaml", kPair) + ".missing.yaml";
  const std::string message = config_error_of([&] { load_build_route(path); });
  EXPECT_THAT(message, ErrorAt(path, "no such file"));
}

TEST(TopologyErrors, UnknownShippedNameSuggestsTheNearest) {
  const std::string message = config_error_of([] { load_build_route("dgx1-v10"); });
  EXPECT_THAT(message, HasSubstr("unknown topology 'dgx1-v10' (did you mean 'dgx1-v100'?"));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
}

TEST(TopologyErrors, UnknownBaseSuggestsTheNearest) {
  const Failure f = fail("base-typo.yaml", "name: x\nbase: dgx1-v10\n");
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 2), "unknown topology 'dgx1-v10' (did you mean "
                                                "'dgx1-v100'?"));
}

TEST(TopologyErrors, MissingBaseFileNamesTheBaseLine) {
  const Failure f = fail("base-missing.yaml", "name: x\nbase: ./no-such-base.yaml\n");
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 2), "no topology file"));
  EXPECT_THAT(f.message, HasSubstr("no-such-base.yaml"));
}

TEST(TopologyErrors, RemovingALinkTheBaseLacks) {
  const Failure f = fail("remove-link.yaml", R"(base: dgx1-v100
name: x
links:
  - {a: gpu0, b: gpu7, remove: true}
)");
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 4), "no link gpu0-gpu7 in the base to remove"));
}

TEST(TopologyErrors, RemovingADeviceTheBaseLacks) {
  const Failure f = fail("remove-device.yaml", R"(base: dgx1-v100
name: x
devices:
  gpu8: {remove: true}
)");
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 4), "no device 'gpu8' in the base to remove"));
}

TEST(TopologyErrors, ErrorInADerivedValueNamesTheDerivedFile) {
  const Failure f = fail("derived-bad.yaml", R"(base: dgx1-v100
name: x
link_kinds:
  nvlink: {lane_bandwidth: 50 GB}
)");
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 4), "unknown unit 'GB'"));
}

TEST(TopologyErrors, ErrorInTheBaseNamesTheBaseFile) {
  const std::string base =
      write_temp_file("broken-base.yaml", pair_with_line(6, "  gpu1: {kind: gpu, model: V100}"));
  const Failure f = fail("on-broken-base.yaml", "base: broken-base.yaml\nname: x\n");
  EXPECT_THAT(f.message, ErrorAt(at(base, 6), "device gpu1 lacks 'memory'"));
}

TEST(TopologyErrors, CircularBaseChain) {
  const std::string b = write_temp_file("cycle-b.yaml", "base: cycle-a.yaml\nname: b\n");
  const Failure f = fail("cycle-a.yaml", "base: cycle-b.yaml\nname: a\n");
  EXPECT_THAT(f.message, HasSubstr("'base:' chain is too deep or circular"));
  EXPECT_THAT(f.message, AnyOf(ErrorAt(at(f.path, 1), "circular"), ErrorAt(at(b, 1), "circular")));
}

// --- `--set` overrides -----------------------------------------------------------------------

TEST(TopologyErrors, OverrideWithoutEquals) {
  const Failure f = fail("set-syntax.yaml", kPair, {"routing"});
  EXPECT_THAT(f.message, ErrorAt("--set routing", "expected KEY=VALUE"));
}

TEST(TopologyErrors, OverrideOfAnUnknownKeyNamesTheOption) {
  const Failure f = fail("set-unknown.yaml", kPair, {"x=y"});
  EXPECT_THAT(f.message, ErrorAt("--set x=y", "unknown key 'x' in topology"));
}

TEST(TopologyErrors, OverrideOfAMisspelledLinkKeySuggestsTheNearest) {
  const Failure f = fail("set-typo.yaml", kPair, {"links.0.lane=4"});
  EXPECT_THAT(f.message, ErrorAt("--set links.0.lane=4", "unknown key 'lane' in link gpu0-gpu1 "
                                                         "(did you mean 'lanes'?)"));
}

TEST(TopologyErrors, OverrideWithABadValueNamesTheOption) {
  write_temp_file("node.yaml", kNode);
  const Failure f = fail("set-cluster.yaml", cluster_text(2, 1, 36), {"cluster.nodes=abc"});
  EXPECT_THAT(f.message, ErrorAt("--set cluster.nodes=abc", "'nodes' of cluster 'abc' is not a "
                                                            "whole number"));
}

TEST(TopologyErrors, OverrideOfAListItemOutOfRange) {
  const Failure f = fail("set-index.yaml", kPair, {"links.3.lanes=1"});
  EXPECT_THAT(f.message, ErrorAt("--set links.3.lanes=1", "write an index from 0 to 0"));
}

// --- Clusters --------------------------------------------------------------------------------

TEST(TopologyErrors, ClusterWithMoreRailsThanNics) {
  write_temp_file("node.yaml", kNode);
  const Failure f = fail("rails.yaml", cluster_text(2, 2, 36));
  EXPECT_THAT(f.message, StartsWith(f.path + ":"));
  EXPECT_THAT(f.message, HasSubstr("2 rails need 2 NICs per node, but the node has 1"));
  EXPECT_THAT(f.message, Not(HasSubstr("\n")));
}

TEST(TopologyErrors, ClusterWithMoreRailsThanNicsNamesTheRailsLine) {
  write_temp_file("node.yaml", kNode);
  const Failure f = fail("rails-line.yaml", cluster_text(2, 2, 36));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 7), "2 rails need 2 NICs"));
}

// Radix 8 at taper 1: 4 nodes a leaf; two levels hold 8 leaves (32 nodes), three levels 8 pods of
// 4 leaves (128 nodes).
TEST(TopologyErrors, ClusterTooBigForAThreeLevelFatTree) {
  write_temp_file("node.yaml", kNode);
  const Failure f = fail("too-many.yaml", cluster_text(129, 1, 8));
  EXPECT_THAT(f.message, StartsWith(f.path + ":"));
  EXPECT_THAT(f.message, HasSubstr("129 nodes exceed what a 3-level fat tree of radix 8 and "
                                   "taper 1 holds (128 nodes; raise switch_radix or taper)"));
  EXPECT_THAT(f.message, Not(HasSubstr("\n")));
}

TEST(TopologyErrors, ClusterTooBigNamesTheNodesLine) {
  write_temp_file("node.yaml", kNode);
  const Failure f = fail("too-many-line.yaml", cluster_text(129, 1, 8));
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 4), "129 nodes exceed"));
}

TEST(TopologyErrors, ClusterTooBigByOverrideNamesTheOption) {
  write_temp_file("node.yaml", kNode);
  const Failure f = fail("too-many-set.yaml", cluster_text(2, 1, 8), {"cluster.nodes=129"});
  EXPECT_THAT(f.message, ErrorAt("--set cluster.nodes=129", "129 nodes exceed"));
}

TEST(TopologyErrors, OverrideOfTheClusterNodeIsNotIgnored) {
  write_temp_file("node.yaml", kNode);
  const Failure f = fail("set-node.yaml", cluster_text(2, 1, 36), {"cluster.node=gone.yaml"});
  EXPECT_THAT(f.message, StartsWith("--set cluster.node=gone.yaml: "));
}

TEST(TopologyErrors, ClusterWhoseNodeIsACluster) {
  const Failure f = fail("nested.yaml", R"(name: nested
cluster:
  node: lassen
  nodes: 2
  network: {topology: fat_tree, rails: 1, taper: 1, switch_radix: 36, switch_latency: 90 ns,
            link: {kind: infiniband, lanes: 4}}
)");
  EXPECT_THAT(f.message, ErrorAt(at(f.path, 3), "the node of a cluster must be a single machine"));
}

TEST(TopologyErrors, ClusterWithUnknownNetworkTopology) {
  write_temp_file("node.yaml", kNode);
  const Failure f = fail("torus.yaml", cluster_text(2, 1, 36), {"cluster.network.topology=torus"});
  EXPECT_THAT(f.message, ErrorAt("--set cluster.network.topology=torus",
                                 "unknown network topology 'torus'"));
}

TEST(TopologyErrors, ClusterNodeFileMissing) {
  const Failure g = fail("lost-node2.yaml", [] {
    std::string text = cluster_text(2, 1, 36);
    text.replace(text.find("node.yaml"), 9, "gone.yaml");
    return text;
  }());
  EXPECT_THAT(g.message, ErrorAt(at(g.path, 3), "no topology file"));
  EXPECT_THAT(g.message, HasSubstr("gone.yaml"));
}

// --- One line each ---------------------------------------------------------------------------

TEST(TopologyErrors, EveryMessageIsOneLine) {
  write_temp_file("node.yaml", kNode);
  const std::string pair = write_temp_file("one-line-pair.yaml", kPair);
  const std::string cluster = write_temp_file("one-line-cluster.yaml", cluster_text(2, 1, 8));
  std::vector<std::string> messages;
  for (const char* set :
       {"links.0.lanes=0", "links.0.lanes=x", "links.0.kind=foo", "links.0.efficiency=2",
        "links.0.lane_bandwidth=25", "links.0.lane_bandwidth=0 GB/s", "links.0.a=gpu7",
        "links.0.b=gpu0", "link_kinds.nvlink.latency=-1 us", "link_kinds.nvlink.latency=1 hour",
        "devices.gpu0.kind=tpu", "devices.gpu0.memory=0 GB", "devices.gpu0.memory=lots",
        "devices.gpu0.colour=red", "routing=fast", "routing=pcie", "nme=m", "links.5.lanes=1",
        "devices.gpu9.kind=gpu", "name.x=1", "devices=1", "=1", "links"}) {
    messages.push_back(config_error_of([&] { load_build_route(pair, {set}); }));
  }
  for (const char* set : {"cluster.nodes=0", "cluster.nodes=129", "cluster.network.rails=2",
                          "cluster.network.switch_radix=2", "cluster.network.link.kind=ethernet",
                          "cluster.network.taper=x"}) {
    messages.push_back(config_error_of([&] { load_build_route(cluster, {set}); }));
  }
  for (const std::string& text :
       {pair_with_line(6, " gpu1: {kind: gpu}"), pair_with_line(8, "  - {a: gpu0, b: [gpu1"),
        std::string("name: x\n\tdevices: {}\n"), std::string("a: b: c\n"),
        std::string("name: 'x\n"), std::string("- 1\n")}) {
    const std::string path = write_temp_file("one-line-yaml.yaml", text);
    messages.push_back(config_error_of([&] { load_build_route(path); }));
  }
  messages.push_back(config_error_of([] { load_build_route("/no/such/dir/x.yaml"); }));
  messages.push_back(config_error_of([] { load_build_route("no-such-machine"); }));

  for (const std::string& message : messages) {
    EXPECT_THAT(message, AllOf(Not(HasSubstr("\n")), Not(HasSubstr("<no ConfigError thrown>")),
                               Not(StartsWith(":"))));
  }
}

TEST(TopologyErrors, ValueWithANewlineStillGivesOneLine) {
  const Failure f = fail("newline-kind.yaml", pair_with_line(6, "  gpu1: {kind: \"gp\\nu\", "
                                                                "model: V100, memory: 16 GB}"));
  ASSERT_THAT(f.message, StartsWith(at(f.path, 6) + ": unknown device kind"));
  EXPECT_THAT(f.message, Not(HasSubstr("\n")));
}

}  // namespace
}  // namespace gpuscale::topo
