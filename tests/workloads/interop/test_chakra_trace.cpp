// Chakra execution traces: an iteration written and read back is the same graph and replays to
// the same time; every rank gets its file; hand-encoded traces with a node type, comm type or
// dependency gpuscale cannot replay, or cut short, give one line naming the file and the node.
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/trace/trace_job.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/interop/astra_sim_text.hpp"
#include "workloads/interop/chakra_trace.hpp"

namespace gpuscale::interop {
namespace {

using gpuscale::testing::config_error_of;
using gpuscale::testing::file_bytes;
using gpuscale::testing::temp_prefix;
using gpuscale::testing::write_temp_file;

const std::string kData = std::string(GPUSCALE_SOURCE_DIR) + "/tests/interop/data/";

TEST(ChakraTrace, RoundTripKeepsTheGraph) {
  TraceGraph g = astra_sim_iteration(load_astra_sim_workload(kData + "resnet50-like.txt"));
  g.nodes.push_back({TraceNode::Kind::Send, "send", 0, {}, 4096, 3, {0}});
  g.nodes.push_back({TraceNode::Kind::Recv, "recv", 0, {}, 4096, 5, {0}});
  g.nodes.push_back({TraceNode::Kind::Collective, "bcast", 0, wl::Collective::Broadcast, 8, 0, {}});
  const std::string prefix = temp_prefix("resnet");
  write_chakra_trace(g, prefix, 8);
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_TRUE(std::filesystem::exists(prefix + "." + std::to_string(rank) + ".et")) << rank;
  }
  const TraceGraph back = read_chakra_trace(prefix);
  EXPECT_EQ(back.source, prefix + ".0.et");
  ASSERT_EQ(back.nodes.size(), g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const TraceNode &a = g.nodes[i], &b = back.nodes[i];
    EXPECT_EQ(a.kind, b.kind) << i;
    EXPECT_EQ(a.name, b.name) << i;
    EXPECT_EQ(a.seconds, b.seconds) << i;
    EXPECT_EQ(a.collective, b.collective) << i;
    EXPECT_EQ(a.bytes, b.bytes) << i;
    EXPECT_EQ(a.peer, b.peer) << i;
    EXPECT_EQ(a.deps, b.deps) << i;
  }
  // Rank 3's file is rank 0's moved round by 3: it sends to rank 6.
  EXPECT_NE(file_bytes(prefix + ".3.et"), file_bytes(prefix + ".0.et"));
}

TEST(ChakraTrace, RoundTripReplaysToTheSameTime) {
  const TraceGraph g = astra_sim_iteration(load_astra_sim_workload(kData + "resnet50-like.txt"));
  const std::string prefix = temp_prefix("replayed");
  write_chakra_trace(g, prefix, 8);
  sim::TraceJob job;
  job.topology = "dgx-h200";
  job.gpus = 8;
  const sim::TraceResult a = sim::run_trace_job(g, job).replay;
  const sim::TraceResult b = sim::run_trace_job(read_chakra_trace(prefix), job).replay;
  EXPECT_EQ(a.iteration_s, b.iteration_s);
  EXPECT_EQ(a.exposed_communication_s, b.exposed_communication_s);
  EXPECT_EQ(a.collectives, b.collectives);
}

TEST(ChakraTrace, WritingTwiceGivesTheSameBytes) {
  const TraceGraph g = astra_sim_iteration(load_astra_sim_workload(kData + "resnet50-like.txt"));
  const std::string a = temp_prefix("first"), b = temp_prefix("second");
  write_chakra_trace(g, a, 2);
  write_chakra_trace(g, b, 2);
  EXPECT_EQ(file_bytes(a + ".1.et"), file_bytes(b + ".1.et"));
}

// Protobuf's wire format by hand, so that the tests can write what gpuscale never would.
std::string varint(uint64_t v) {
  std::string out;
  do {
    out += static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v != 0);
  return out;
}
std::string field_varint(int field, uint64_t v) { return varint(field << 3) + varint(v); }
std::string field_bytes(int field, const std::string& bytes) {
  return varint((field << 3) | 2) + varint(bytes.size()) + bytes;
}
std::string delimited(const std::string& message) { return varint(message.size()) + message; }

// A Node: id 1, name 2, type 3, ctrl_deps 4, data_deps 5, attr 10 (name 1, int64_val 9).
std::string node(uint64_t id, const std::string& name, int type, std::vector<uint64_t> deps = {},
                 std::vector<std::pair<std::string, int64_t>> attrs = {}) {
  std::string m = field_varint(1, id) + field_bytes(2, name) + field_varint(3, type);
  for (uint64_t d : deps) m += field_varint(5, d);
  for (const auto& [key, value] : attrs) {
    m += field_bytes(10, field_bytes(1, key) + field_varint(9, static_cast<uint64_t>(value)));
  }
  return delimited(m);
}

const std::string kMetadata = delimited(field_bytes(1, "0.0.4"));
constexpr int kComp = 4, kColl = 7;

std::string error_of(const std::string& name, const std::string& bytes) {
  const std::string prefix = temp_prefix(name);
  write_temp_file(name + ".0.et", bytes);
  const std::string message = config_error_of([&] { read_chakra_trace(prefix); });
  EXPECT_EQ(message.rfind(prefix + ".0.et: ", 0), 0u) << message;
  return message.substr(prefix.size() + 7);
}

TEST(ChakraTrace, ReadsHandWrittenNodesInDependencyOrder) {
  const std::string prefix = temp_prefix("hand");
  write_temp_file("hand.0.et", kMetadata +
                                   node(7, "allreduce", kColl, {3},
                                        {{"comm_type", 0}, {"comm_size", 1000}}) +
                                   node(3, "kernel", kComp) + node(9, "load", 2, {7}));
  const TraceGraph g = read_chakra_trace(prefix);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].name, "kernel");
  EXPECT_EQ(g.nodes[1].kind, TraceNode::Kind::Collective);
  EXPECT_EQ(g.nodes[1].bytes, 1000);
  EXPECT_EQ(g.nodes[1].deps, std::vector<int>{0});
  EXPECT_EQ(g.nodes[2].kind, TraceNode::Kind::Delay);  // a memory load takes no time
}

TEST(ChakraTrace, MistakesNameTheFileAndTheNode) {
  EXPECT_EQ(error_of("dangling", kMetadata + node(1, "k", kComp, {5})),
            "node 1 'k': depends on node 5, which is not in the file");
  EXPECT_EQ(error_of("cycle", kMetadata + node(1, "a", kComp, {2}) + node(2, "b", kComp, {1})),
            "node 1 'a': is in a cycle of dependencies");
  EXPECT_EQ(error_of("gather", kMetadata + node(1, "g", kColl, {}, {{"comm_type", 3},
                                                                     {"comm_size", 8}})),
            "node 1 'g': comm_type 3 (GATHER) is not replayed (gpuscale replays ALL_REDUCE, "
            "REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, REDUCE_SCATTER, BARRIER)");
  EXPECT_EQ(error_of("nosize", kMetadata + node(1, "c", kColl, {}, {{"comm_type", 0}})),
            "node 1 'c': no attribute comm_size");
  EXPECT_EQ(error_of("invalid", kMetadata + node(1, "x", 0)),
            "node 1 'x': node type 0 is not one of METADATA_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, "
            "COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE");
  EXPECT_EQ(error_of("ops", kMetadata + node(1, "k", kComp, {}, {{"num_ops", 100}})),
            "node 1 'k': has num_ops but no duration_micros (gpuscale does not derive a kernel's "
            "time from num_ops and tensor_size: give each compute node its duration)");
  EXPECT_EQ(error_of("huge", kMetadata + node(1, "c", kColl, {}, {{"comm_type", 0},
                                                                   {"comm_size", -1}})),
            "node 1 'c': comm_size -1 is not between 0 and 1 EiB");
  const std::string whole = kMetadata + node(1, "k", kComp) + node(2, "l", kComp, {1});
  EXPECT_EQ(error_of("truncated", whole.substr(0, whole.size() - 3)),
            "message 3 (after node 1) is truncated or not a Chakra Node");
  EXPECT_EQ(error_of("empty", ""), "empty file (a Chakra trace opens with its GlobalMetadata)");
}

TEST(ChakraTrace, MissingFileSaysWhatToGive) {
  EXPECT_EQ(config_error_of([] { read_chakra_trace("/no/such/trace"); }),
            "/no/such/trace.0.et: cannot read rank 0's Chakra trace (give --chakra the prefix of "
            "PREFIX.0.et, PREFIX.1.et, ...)");
}

}  // namespace
}  // namespace gpuscale::interop
