// ASTRA-sim 1.0's text workloads (inputs/workload/*.txt: Resnet50_DataParallel.txt,
// microAllReduce.txt, ...), as astra-sim/workload/Workload.cc reads them
// (Workload::initialize_workload, astra-sim/astra-sim tag tutorial-isca2022, commit
// 92c9c20d2270b8c2575bc508c04a95b55a234457):
//
//   DATA                                  the parallelism, then for some kinds more tokens
//   54                                    the number of layers
//   conv1 -1 13003 NONE 0 12864 NONE 0 32291 ALLREDUCE 37632 3229
//   name reserved fwd_compute fwd_comm_type fwd_comm_size ig_compute ig_comm_type ig_comm_size
//        wg_compute wg_comm_type wg_comm_size wg_update
//
// Times are cycles (ASTRA-sim's Tick), one nanosecond each (astra-sim/system/Common.hh:
// CLOCK_PERIOD 1, FREQ 1000 MHz); sizes are bytes. Comm types: NONE, ALLREDUCE, ALLGATHER,
// REDUCESCATTER, ALLTOALL (ALLREDUCEALLTOALL, DLRM's, is refused).
//
// gpuscale replays DATA (iterate_data_parallel) and MICRO (iterate_micro_benchmark); the hybrid
// and model-parallel kinds are refused at line 1 with what to do instead (docs/interop.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/interop/trace_graph.hpp"
#include "workloads/src/collective.hpp"

namespace gpuscale::interop {

inline constexpr double kAstraSimCycle_s = 1e-9;

struct AstraSimComm {
  std::optional<wl::Collective> kind;  // none: NONE
  uint64_t bytes = 0;
};

struct AstraSimLayer {
  std::string name;
  int line = 0;  // where it was read, for messages
  uint64_t fwd_cycles = 0, ig_cycles = 0, wg_cycles = 0, wg_update_cycles = 0;
  AstraSimComm fwd_comm, ig_comm, wg_comm;
};

struct AstraSimWorkload {
  std::string path;
  std::string parallelism;  // "DATA" or "MICRO"
  std::vector<AstraSimLayer> layers;
};

// Throws ConfigError "PATH:LINE: what is wrong (what to do)" for a file it cannot read, a
// parallelism it does not replay, a wrong layer count, a line with too few or too many fields, a
// time or size that is not a whole number, an unknown comm type.
AstraSimWorkload load_astra_sim_workload(const std::string& path);

// One iteration as ASTRA-sim 1.0 runs it (Workload::iterate_data_parallel): the forward of every
// layer in order; then from the last layer to the first its weight-gradient kernels, its
// weight-gradient collective issued at once (overlapping the rest of the backward) and, for every
// layer but the first, its input-gradient kernels; each collective followed by the layer's
// wg_update delay (Layer::call, Wight_Grad_Comm_Finished: a layer without a collective has no
// update). The forward and input-gradient collectives are ignored, as DATA mode ignores them.
// MICRO: every layer's weight-gradient collective (and update) at once, no kernels.
TraceGraph astra_sim_iteration(const AstraSimWorkload& workload);

}  // namespace gpuscale::interop
