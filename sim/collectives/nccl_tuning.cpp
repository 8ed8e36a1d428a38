#include "sim/collectives/nccl_tuning.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <stdexcept>

namespace gpuscale::coll {
namespace {

// NCCL's log2i: floor(log2 n), 0 for n <= 1.
int log2i(double n) {
  int k = 0;
  for (double m = std::floor(n); m >= 2; m = std::floor(m / 2)) ++k;
  return k;
}

int protocol_index(NcclProtocol p) { return static_cast<int>(p); }

// Algorithm bandwidth (GB/s) and latency (us) of an allreduce (ncclTopoTuneModel).
struct Tuned {
  double bandwidth = 0;
  double latency = 0;
};

// ncclTopoGetAlgoTime, us: latency + bytes / bandwidth, a tree's bandwidth times its correction
// for the size (`tree_correction`, indexed by log2(bytes / 64), 1 past its end), the latency
// times `plateau`. Negative for a disabled pair (bandwidth 0).
double algo_time_us(Tuned t, NcclAlgorithm a, double bytes,
                    std::span<const double> tree_correction, double plateau) {
  if (t.bandwidth == 0) return -1;
  const size_t log_size = static_cast<size_t>(log2i(std::floor(bytes / 64)));
  if (a == NcclAlgorithm::Tree && log_size < tree_correction.size()) {
    t.bandwidth *= tree_correction[log_size];
  }
  return t.latency * plateau + bytes / (1000 * t.bandwidth);
}

// --- NCCL 2.7.8 (v2.7.8-1, src/graph/tuning.cc) --------------------------------------------

// ll128MaxBwPerCh[ncclCollAllReduce] (line 76).
constexpr double kLl128MaxBwPerCh_2_7 = 16.7;

// treeCorrectionFactor[proto][log2(bytes / 64)] (lines 243-248): powers of two, 64 B to 128 MB.
constexpr std::array<std::array<double, 22>, 3> kTreeCorrection_2_7 = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9},
}};

// ncclTopoTuneModel, lines 93-142.
Tuned tune_2_7(const NcclComm& c, NcclAlgorithm a, NcclProtocol p) {
  if (a == NcclAlgorithm::Nvls) return {};
  const bool cc80 = c.compute_capability == 80;
  const double ppn = static_cast<double>(c.ranks) / c.nodes;
  double bus = c.channels * c.channel_bw_GBps;
  if (cc80) bus = std::min(bus, 235.0);
  if (a == NcclAlgorithm::Ring) {
    if (p == NcclProtocol::LL) bus *= 1.0 / 4.0;
    if (p == NcclProtocol::LL128) {
      bus = std::min(bus * (ppn < 2 ? 0.7 : 0.92), kLl128MaxBwPerCh_2_7 * c.channels);
    }
  } else {
    const bool ll128 = p == NcclProtocol::LL128;
    const double max_tree = c.nodes > 2 ? (cc80 && ll128 ? 105.0 : 80.0)
                                        : (cc80 && ll128 ? 130.0 : 110.0);
    bus = std::min(bus * .9, max_tree);
    if (p == NcclProtocol::LL) bus *= 1.0 / 3.8;
    if (ll128) {
      bus = std::min(bus * (c.nodes == 1 ? 7.0 / 9.0 : 0.915),
                     kLl128MaxBwPerCh_2_7 * c.channels * 7.0 / 9.0);
    }
  }
  const int steps = 2 * (c.ranks - 1), inter_steps = 2 * (c.nodes - 1);
  const double ratio = a == NcclAlgorithm::Ring ? static_cast<double>(c.ranks) / steps : 0.5;

  const Protocol lat = nccl_protocol(p, c.intra, NcclVersion::v2_7_8);
  double intra = (a == NcclAlgorithm::Ring ? lat.ring_hop_intra_s : lat.tree_hop_intra_s) * 1e6;
  const double inter =
      (a == NcclAlgorithm::Ring ? lat.ring_hop_inter_s : lat.tree_hop_inter_s) * 1e6;
  if (c.nodes > 1 && p == NcclProtocol::LL) intra *= 1.8;
  Tuned t;
  t.bandwidth = bus * ratio;
  if (a == NcclAlgorithm::Ring) {
    t.latency = lat.ring_base_s * 1e6 + (steps - inter_steps) * intra + inter_steps * inter;
  } else {
    t.latency = lat.tree_base_s * 1e6 +
                2 * ((c.ranks / c.nodes - 1) * intra + log2i(c.nodes) * inter);
  }
  // LL128 only on Volta and Ampere over NVLink (lines 162-166).
  const bool ll128_on = c.intra == IntraLink::NvLink &&
                        (c.compute_capability == 70 || c.compute_capability == 80);
  if (p == NcclProtocol::LL128 && !ll128_on) t.bandwidth = 0;
  return t;
}

// The ring's plateau (ncclTopoGetAlgoTime, lines 261-262).
double ring_plateau_2_7(const NcclComm& c, NcclAlgorithm a, NcclProtocol p, double bytes) {
  const bool on_plateau = a == NcclAlgorithm::Ring && p == NcclProtocol::Simple && c.nodes > 1 &&
                          bytes >= c.ranks / 16.0 * 65536;
  return on_plateau ? 1.9 : 1;
}

// --- NCCL 2.21.5 (v2.21.5-1, src/graph/tuning.cc) ------------------------------------------

// Rows Volta, Ampere, Hopper; columns one node, two nodes, more (lines 85-106).
constexpr double kLlMaxBws[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}};
constexpr double kPerChMaxRingLl128Bws[3][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}};
constexpr double kPerChMaxTreeLl128Bws[3][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};
constexpr double kPerChMaxTreeBws[3][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};

// hwLat[NVLINK][NVLS][Simple] (line 69); baseLat of NVLS is 0 (line 59).
constexpr double kNvlsLatencyUs = 25;

// Lines 412-416: powers of two, 64 B to 256 MB.
constexpr std::array<std::array<double, 23>, 3> kTreeCorrection_2_21 = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0,
     1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0,
     1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};

Tuned tune_2_21(const NcclComm& c, NcclAlgorithm a, NcclProtocol p) {
  const int arch = c.compute_capability >= 90 ? 2 : c.compute_capability >= 80 ? 1 : 0;
  const int nodes_column = c.nodes <= 2 ? c.nodes - 1 : 2;
  // LL's cap follows the GPU on one node, the CPU vendor across nodes (lines 145-146).
  const int ll_row = c.nodes == 1 ? arch : c.amd_cpu ? 1 : 0;
  const double ll_max = kLlMaxBws[ll_row][nodes_column];
  const double ppn = static_cast<double>(c.ranks) / c.nodes;
  const int steps = 2 * (c.ranks - 1), inter_steps = c.nodes > 1 ? 2 * c.nodes : 0;

  Tuned t;
  if (a == NcclAlgorithm::Nvls) {
    // One node only without CollNet (line 298), Simple only (line 175).
    if (c.nvls_bus_bw_GBps <= 0 || c.nodes > 1 || p != NcclProtocol::Simple) return {};
    t.bandwidth = c.nvls_bus_bw_GBps * 5.0 / 6.0;
    t.latency = kNvlsLatencyUs;
    return t;
  }
  double bus = c.channels * c.channel_bw_GBps;
  if (a == NcclAlgorithm::Ring) {
    if (p == NcclProtocol::LL) bus = std::min(ll_max, bus * .5);
    if (p == NcclProtocol::LL128) {
      bus = std::min(bus * (ppn < 2 ? 0.7 : 0.92),
                     c.channels * kPerChMaxRingLl128Bws[arch][nodes_column]);
    }
  } else {
    // The tree graph's pattern is BALANCED_TREE by default, so line 186's 0.85 does not apply.
    bus = std::min(bus * .92, c.channels * kPerChMaxTreeBws[arch][nodes_column]);
    if (p == NcclProtocol::LL) bus = std::min(bus / 3.8, ll_max);
    if (p == NcclProtocol::LL128) {
      bus = std::min(bus * (c.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                     c.channels * kPerChMaxTreeLl128Bws[arch][nodes_column]);
    }
  }
  t.bandwidth = bus * (a == NcclAlgorithm::Ring ? static_cast<double>(c.ranks) / steps : 0.5);

  const Protocol lat = nccl_protocol(p, c.intra, NcclVersion::v2_21_5);
  if (a == NcclAlgorithm::Ring) {
    // An inter-node ring still posts every step to the network (getNetOverhead: 1 us on Intel,
    // 2 on AMD; three times for Simple), lines 237-243.
    double net_overhead = 0;
    if (c.nodes > 1) net_overhead = (c.amd_cpu ? 2.0 : 1.0) * (p == NcclProtocol::Simple ? 3 : 1);
    const double intra = std::max(lat.ring_hop_intra_s * 1e6, net_overhead);
    t.latency = lat.ring_base_s * 1e6 + (steps - inter_steps) * intra +
                inter_steps * lat.ring_hop_inter_s * 1e6;
  } else {
    t.latency = lat.tree_base_s * 1e6 + 2 * ((c.ranks / c.nodes - 1) * lat.tree_hop_intra_s * 1e6 +
                                             log2i(c.nodes) * lat.tree_hop_inter_s * 1e6);
  }
  // LL128 on Volta, Ampere and Hopper over NVLink (lines 315-327).
  const bool ll128_on = c.intra == IntraLink::NvLink &&
                        (c.compute_capability == 70 || c.compute_capability == 80 ||
                         c.compute_capability == 90);
  if (p == NcclProtocol::LL128 && !ll128_on) t.bandwidth = 0;
  return t;
}

// The ring's plateau, lines 437-440: 1.9 before Ampere, 1.4 from it.
double ring_plateau_2_21(const NcclComm& c, NcclAlgorithm a, NcclProtocol p, double bytes) {
  const bool on_plateau = a == NcclAlgorithm::Ring && p == NcclProtocol::Simple && c.nodes > 1 &&
                          bytes / (static_cast<double>(c.channels) * c.ranks) >= 64;
  if (!on_plateau) return 1;
  return c.compute_capability < 80 ? 1.9 : 1.4;
}

}  // namespace

const char* to_string(NcclVersion version) {
  return version == NcclVersion::v2_21_5 ? "2.21.5" : "2.7.8";
}

const char* to_string(NcclAlgorithm algorithm) {
  switch (algorithm) {
    case NcclAlgorithm::Ring: return "ring";
    case NcclAlgorithm::Tree: return "tree";
    case NcclAlgorithm::Nvls: return "nvls";
  }
  return "?";
}

const char* schedule_of(NcclAlgorithm algorithm) {
  switch (algorithm) {
    case NcclAlgorithm::Ring: return "nccl_ring";
    case NcclAlgorithm::Tree: return "nccl_tree";
    case NcclAlgorithm::Nvls: return "nccl_nvls";
  }
  return "?";
}

double nccl_model_allreduce_s(const NcclComm& comm, NcclAlgorithm algorithm,
                              NcclProtocol protocol, double bytes) {
  if (comm.ranks < 2 || comm.nodes < 1 || comm.channels < 1 || !(comm.channel_bw_GBps > 0)) {
    throw std::invalid_argument("nccl_model_allreduce_s: a communicator needs ranks >= 2, "
                                "nodes, channels and a channel bandwidth");
  }
  const size_t proto = static_cast<size_t>(protocol_index(protocol));
  const double us =
      comm.version == NcclVersion::v2_21_5
          ? algo_time_us(tune_2_21(comm, algorithm, protocol), algorithm, bytes,
                         kTreeCorrection_2_21[proto],
                         ring_plateau_2_21(comm, algorithm, protocol, bytes))
          : algo_time_us(tune_2_7(comm, algorithm, protocol), algorithm, bytes,
                         kTreeCorrection_2_7[proto],
                         ring_plateau_2_7(comm, algorithm, protocol, bytes));
  return us < 0 ? -1 : us * 1e-6;
}

NcclChoice choose_nccl_allreduce(const NcclComm& comm, double bytes,
                                 const std::vector<NcclProtocol>& protocols) {
  NcclChoice best;
  best.seconds = -1;
  for (NcclAlgorithm a : {NcclAlgorithm::Tree, NcclAlgorithm::Ring, NcclAlgorithm::Nvls}) {
    for (NcclProtocol p : protocols) {
      const double s = nccl_model_allreduce_s(comm, a, p, bytes);
      if (s >= 0 && (best.seconds < 0 || s < best.seconds)) best = {a, p, s};
    }
  }
  if (best.seconds < 0) {
    throw std::invalid_argument("choose_nccl_allreduce: every algorithm and protocol is off");
  }
  return best;
}

}  // namespace gpuscale::coll
