#include "workloads/interop/chakra_trace.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <queue>
#include <set>

#include "topologies/core/error.hpp"
#include "topologies/core/output_file.hpp"
#include "workloads/chakra/et_def.pb.h"

namespace gpuscale::interop {
namespace {

namespace pb = ChakraProtoMsg;
using Kind = TraceNode::Kind;

// Our own attribute: a duration in seconds, exact where duration_micros rounds to microseconds.
constexpr const char* kDurationAttr = "gpuscale_duration_s";

std::string trace_file(const std::string& prefix, int rank) {
  return fmt::format("{}.{}.et", prefix, rank);
}

// An attribute's integer, whichever integer type the writer chose (chakra's own converters
// write int64 and int32, ASTRA-sim reads some as uint64).
std::optional<int64_t> integer(const pb::AttributeProto& a) {
  using V = pb::AttributeProto::ValueCase;
  switch (a.value_case()) {
    case V::kInt32Val: return a.int32_val();
    case V::kInt64Val: return a.int64_val();
    case V::kUint32Val: return a.uint32_val();
    case V::kUint64Val: return static_cast<int64_t>(a.uint64_val());
    case V::kSint32Val: return a.sint32_val();
    case V::kSint64Val: return a.sint64_val();
    case V::kFixed32Val: return a.fixed32_val();
    case V::kFixed64Val: return static_cast<int64_t>(a.fixed64_val());
    case V::kSfixed32Val: return a.sfixed32_val();
    case V::kSfixed64Val: return a.sfixed64_val();
    default: return std::nullopt;
  }
}

std::optional<wl::Collective> collective_of(int64_t comm_type) {
  switch (comm_type) {
    case pb::ALL_REDUCE: return wl::Collective::AllReduce;
    case pb::REDUCE: return wl::Collective::Reduce;
    case pb::ALL_GATHER: return wl::Collective::AllGather;
    case pb::BROADCAST: return wl::Collective::Broadcast;
    case pb::ALL_TO_ALL: return wl::Collective::AllToAll;
    case pb::REDUCE_SCATTER: return wl::Collective::ReduceScatter;
    default: return std::nullopt;
  }
}

pb::CollectiveCommType comm_type_of(wl::Collective kind) {
  switch (kind) {
    case wl::Collective::AllReduce: return pb::ALL_REDUCE;
    case wl::Collective::Reduce: return pb::REDUCE;
    case wl::Collective::Broadcast: return pb::BROADCAST;
    case wl::Collective::AllGather: return pb::ALL_GATHER;
    case wl::Collective::ReduceScatter: return pb::REDUCE_SCATTER;
    case wl::Collective::AllToAll: return pb::ALL_TO_ALL;
  }
  throw std::logic_error("comm_type_of: unknown collective");
}

// One Node as a TraceNode, its deps still Chakra ids.
class NodeReader {
 public:
  NodeReader(const pb::Node& node, const std::string& path) : node_(node), path_(path) {
    for (const pb::AttributeProto& a : node.attr()) attrs_[a.name()] = &a;
  }

  TraceNode read() const {
    TraceNode t;
    t.name = node_.name();
    switch (node_.type()) {
      case pb::COMP_NODE: {
        const pb::AttributeProto* exact = attr(kDurationAttr);
        t.seconds = exact != nullptr ? exact->double_val()
                                     : static_cast<double>(node_.duration_micros()) * 1e-6;
        if (!(t.seconds >= 0 && t.seconds <= kMaxTraceSeconds)) {
          fail(fmt::format("duration {} s is not between 0 and a day", t.seconds));
        }
        if (t.seconds == 0 && attr("num_ops") != nullptr && integer(*attr("num_ops")).value_or(0) > 0) {
          fail("has num_ops but no duration_micros (gpuscale does not derive a kernel's time "
               "from num_ops and tensor_size: give each compute node its duration)");
        }
        const pb::AttributeProto* cpu = attr("is_cpu_op");
        t.kind = cpu != nullptr && cpu->bool_val() ? Kind::Delay : Kind::Compute;
        break;
      }
      case pb::COMM_COLL_NODE: {
        const int64_t type = required("comm_type");
        if (type == pb::BARRIER) {  // every rank runs the same graph: all arrive together
          t.kind = Kind::Delay;
          break;
        }
        const std::optional<wl::Collective> kind = collective_of(type);
        if (!kind) {
          fail(fmt::format("comm_type {} ({}) is not replayed (gpuscale replays ALL_REDUCE, "
                           "REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, REDUCE_SCATTER, BARRIER)",
                           type, pb::CollectiveCommType_IsValid(static_cast<int>(type))
                                     ? pb::CollectiveCommType_Name(static_cast<int>(type))
                                     : "unknown"));
        }
        t.kind = Kind::Collective;
        t.collective = *kind;
        t.bytes = bytes();
        break;
      }
      case pb::COMM_SEND_NODE:
      case pb::COMM_RECV_NODE: {
        const bool send = node_.type() == pb::COMM_SEND_NODE;
        t.kind = send ? Kind::Send : Kind::Recv;
        t.bytes = bytes();
        const int64_t peer = required(send ? "comm_dst" : "comm_src");
        if (peer < 0 || peer > (1 << 30)) fail(fmt::format("rank {} out of range", peer));
        t.peer = static_cast<int>(peer);
        break;
      }
      case pb::METADATA_NODE:
      case pb::MEM_LOAD_NODE:
      case pb::MEM_STORE_NODE: t.kind = Kind::Delay; break;
      default:
        fail(fmt::format("node type {} is not one of METADATA_NODE, MEM_LOAD_NODE, "
                         "MEM_STORE_NODE, COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, "
                         "COMM_COLL_NODE",
                         static_cast<int>(node_.type())));
    }
    return t;
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError({path_, 0}, fmt::format("node {} '{}': {}", node_.id(), node_.name(), what));
  }

 private:
  const pb::AttributeProto* attr(const std::string& name) const {
    const auto it = attrs_.find(name);
    return it == attrs_.end() ? nullptr : it->second;
  }

  int64_t required(const std::string& name) const {
    const pb::AttributeProto* a = attr(name);
    if (a == nullptr) fail(fmt::format("no attribute {}", name));
    const std::optional<int64_t> value = integer(*a);
    if (!value) fail(fmt::format("attribute {} is not an integer", name));
    return *value;
  }

  double bytes() const {
    const int64_t size = required("comm_size");
    if (size < 0 || static_cast<double>(size) > kMaxTraceBytes) {
      fail(fmt::format("comm_size {} is not between 0 and 1 EiB", size));
    }
    return static_cast<double>(size);
  }

  const pb::Node& node_;
  const std::string& path_;
  std::map<std::string, const pb::AttributeProto*> attrs_;
};

// The nodes in an order where each follows its dependencies: by Kahn's algorithm, the earliest
// in the file first among those ready, so that the same file gives the same order.
TraceGraph in_dependency_order(const std::vector<pb::Node>& nodes, const std::string& path) {
  std::map<uint64_t, size_t> position;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!position.emplace(nodes[i].id(), i).second) {
      NodeReader(nodes[i], path).fail("a second node with this id");
    }
  }
  std::vector<std::vector<int>> deps(nodes.size()), successors(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::set<uint64_t> ids(nodes[i].data_deps().begin(), nodes[i].data_deps().end());
    ids.insert(nodes[i].ctrl_deps().begin(), nodes[i].ctrl_deps().end());
    for (uint64_t id : ids) {
      const auto it = position.find(id);
      if (it == position.end()) {
        NodeReader(nodes[i], path).fail(fmt::format("depends on node {}, which is not in the file", id));
      }
      deps[i].push_back(static_cast<int>(it->second));
      successors[it->second].push_back(static_cast<int>(i));
    }
  }
  std::vector<size_t> pending(nodes.size());
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (size_t i = 0; i < nodes.size(); ++i) {
    pending[i] = deps[i].size();
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  }
  TraceGraph g;
  g.source = path;
  std::vector<int> index(nodes.size(), -1);
  while (!ready.empty()) {
    const auto i = static_cast<size_t>(ready.top());
    ready.pop();
    TraceNode t = NodeReader(nodes[i], path).read();
    for (int d : deps[i]) t.deps.push_back(index[static_cast<size_t>(d)]);
    index[i] = static_cast<int>(g.nodes.size());
    g.nodes.push_back(std::move(t));
    for (int s : successors[i]) {
      if (--pending[static_cast<size_t>(s)] == 0) ready.push(s);
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (index[i] < 0) NodeReader(nodes[i], path).fail("is in a cycle of dependencies");
  }
  return g;
}

void add_attr(pb::Node& node, const std::string& name, int64_t value) {
  pb::AttributeProto* a = node.add_attr();
  a->set_name(name);
  a->set_int64_val(value);
}

// Rank `rank`'s file: the graph, its peers those of rank 0 moved round by `rank`.
std::string encode(const TraceGraph& g, int rank, int ranks) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  pb::GlobalMetadata meta;
  meta.set_version("gpuscale");  // never empty: chakra's decodeMessage stops at a 0-byte message
  pb::AttributeProto* source = meta.add_attr();
  source->set_name("source");
  source->set_string_val(g.source);
  google::protobuf::util::SerializeDelimitedToZeroCopyStream(meta, &stream);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const TraceNode& t = g.nodes[i];
    pb::Node node;
    node.set_id(i);
    node.set_name(t.name);
    for (int d : t.deps) node.add_data_deps(static_cast<uint64_t>(d));
    switch (t.kind) {
      case Kind::Compute:
      case Kind::Delay: {
        node.set_type(pb::COMP_NODE);
        node.set_duration_micros(static_cast<uint64_t>(std::llround(t.seconds * 1e6)));
        pb::AttributeProto* exact = node.add_attr();
        exact->set_name(kDurationAttr);
        exact->set_double_val(t.seconds);
        if (t.kind == Kind::Delay) {
          pb::AttributeProto* cpu = node.add_attr();
          cpu->set_name("is_cpu_op");
          cpu->set_bool_val(true);
        }
        break;
      }
      case Kind::Collective:
        node.set_type(pb::COMM_COLL_NODE);
        add_attr(node, "comm_type", comm_type_of(t.collective));
        add_attr(node, "comm_size", std::llround(t.bytes));
        break;
      case Kind::Send:
      case Kind::Recv: {
        const bool send = t.kind == Kind::Send;
        node.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
        add_attr(node, "comm_size", std::llround(t.bytes));
        const int peer = (rank + t.peer) % ranks;
        add_attr(node, "comm_src", send ? rank : peer);
        add_attr(node, "comm_dst", send ? peer : rank);
        break;
      }
    }
    google::protobuf::util::SerializeDelimitedToZeroCopyStream(node, &stream);
  }
  return out;
}

}  // namespace

TraceGraph read_chakra_trace(const std::string& prefix) {
  const std::string path = trace_file(prefix, 0);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError({path, 0}, "cannot read rank 0's Chakra trace (give --chakra the prefix "
                                 "of PREFIX.0.et, PREFIX.1.et, ...)");
  }
  google::protobuf::io::IstreamInputStream stream(&in);
  pb::GlobalMetadata meta;
  bool clean_eof = false;
  if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&meta, &stream, &clean_eof)) {
    throw ConfigError({path, 0}, clean_eof ? "empty file (a Chakra trace opens with its "
                                             "GlobalMetadata)"
                                           : "message 1 (the GlobalMetadata) is truncated or "
                                             "not a Chakra message");
  }
  std::vector<pb::Node> nodes;
  for (;;) {
    pb::Node node;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&node, &stream, &clean_eof)) {
      if (clean_eof) break;
      throw ConfigError({path, 0}, fmt::format("message {} ({}) is truncated or not a "
                                               "Chakra Node",
                                               nodes.size() + 2,
                                               nodes.empty() ? std::string("the first node")
                                                             : fmt::format("after node {}",
                                                                           nodes.back().id())));
    }
    nodes.push_back(std::move(node));
  }
  return in_dependency_order(nodes, path);
}

void write_chakra_trace(const TraceGraph& graph, const std::string& prefix, int ranks) {
  for (int rank = 0; rank < ranks; ++rank) {
    try {
      write_output_file(trace_file(prefix, rank), encode(graph, rank, ranks),
                        {"--export-chakra", 0});
    } catch (const ConfigError&) {
      // No trace of some ranks only: the files this call wrote go too.
      for (int written = 0; written < rank; ++written) {
        std::remove(trace_file(prefix, written).c_str());
      }
      throw;
    }
  }
}

}  // namespace gpuscale::interop
