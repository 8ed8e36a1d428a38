// One rank's training iteration as imported from another simulator's workload (ASTRA-sim 1.0
// text, Chakra execution traces) or exported to one: a graph of kernels, collectives,
// point-to-point messages and delays. Every rank of the job runs the same graph (data
// parallelism), so one graph stands for all of them (docs/interop.md).
//
// Contract: nodes are in dependency order; each node's deps are indices of earlier nodes.
#pragma once

#include <string>
#include <vector>

#include "workloads/src/collective.hpp"

namespace gpuscale::interop {

// The limits of docs/hardening.md on an imported trace: SimGrid aborts on an infinite time, and
// no iteration takes a day; no message is an exbibyte.
inline constexpr double kMaxTraceSeconds = 86400;
inline constexpr double kMaxTraceBytes = 0x1p60;

struct TraceNode {
  enum class Kind {
    Compute,     // kernels on the rank's GPU for `seconds` alone (concurrent kernels share it)
    Collective,  // `collective` of `bytes` (request.hpp's size S) over every rank of the job
    Send,        // `bytes` from this rank to rank `peer`
    Recv,        // `bytes` from rank `peer` to this rank
    Delay,       // `seconds` on no resource (ASTRA-sim's weight update; a zero delay is a join)
  };
  Kind kind = Kind::Delay;
  std::string name;
  double seconds = 0;  // Compute, Delay
  wl::Collective collective = wl::Collective::AllReduce;  // Collective
  double bytes = 0;    // Collective, Send, Recv
  int peer = 0;        // Send, Recv
  std::vector<int> deps;
};

struct TraceGraph {
  std::string source;  // the file (or Chakra prefix) it came from, for messages
  std::vector<TraceNode> nodes;
};

}  // namespace gpuscale::interop
