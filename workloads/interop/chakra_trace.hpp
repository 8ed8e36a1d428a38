// Chakra execution traces (MLCommons; what ASTRA-sim 2 replays): one file per rank,
// PREFIX.RANK.et, each a GlobalMetadata message then Node messages, every message preceded by
// its length as a varint (chakra src/third_party/utils/protolib.py, encodeMessage and
// decodeMessage; the schema is workloads/chakra/et_def.proto).
//
// Reading takes rank 0's file: every rank of a data-parallel job runs the same graph.
//  - COMP_NODE: kernels of duration_micros (or our exact gpuscale_duration_s, where we wrote
//    it); with is_cpu_op (host work) a delay beside the GPU's kernels. num_ops and tensor_size
//    (ASTRA-sim 2's roofline) are not used: a node with num_ops and no duration is an error.
//  - COMM_COLL_NODE: comm_type ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL or
//    REDUCE_SCATTER of comm_size bytes (request.hpp's S) over every rank; a BARRIER costs
//    nothing (every rank reaches it at once); GATHER, SCATTER, REDUCE_SCATTER_BLOCK are refused.
//    involved_dim, pg_name, comm_priority are ignored: a collective spans the whole job.
//  - COMM_SEND_NODE, COMM_RECV_NODE: comm_size bytes to comm_dst, from comm_src.
//  - METADATA_NODE, MEM_LOAD_NODE, MEM_STORE_NODE: joins taking no time.
//  - data_deps and ctrl_deps both order nodes; the file's order does not matter.
//
// Writing gives every rank its own file, the same graph in each, as chakra's text converter
// does; ids are the graph's indices, dependencies data_deps.
#pragma once

#include <string>

#include "workloads/interop/trace_graph.hpp"

namespace gpuscale::interop {

// Reads PREFIX.0.et. Throws ConfigError "PREFIX.0.et: ..." (message number or node id and name,
// what is wrong) for a missing or truncated file, an unknown node type or comm type, a
// dependency on a node that is not there, a cycle.
TraceGraph read_chakra_trace(const std::string& prefix);

// Writes PREFIX.0.et .. PREFIX.(ranks-1).et, each whole or not at all (output_file.hpp), and all
// or none: when a file cannot be written, those written before it are removed. Throws
// ConfigError naming --export-chakra then.
void write_chakra_trace(const TraceGraph& graph, const std::string& prefix, int ranks);

}  // namespace gpuscale::interop
