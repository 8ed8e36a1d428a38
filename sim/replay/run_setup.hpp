// What a training run pays once, before its first iteration: the part of an epoch that weak
// scaling (more images per run) amortises and strong scaling does not, so the two differ for a
// physical reason rather than by construction.
//   autotune:         the framework's cuDNN autotuning (FrameworkConfig::execution.cudnn_autotune)
//                     times every algorithm cuDNN 7 offers for each distinct convolution shape:
//                     8 forward, 6 backward-data and 7 backward-filter algorithms (cudnn.h,
//                     CUDNN_CONVOLUTION_*_ALGO_COUNT), each counted at the time of the
//                     algorithm the compute model runs. Every GPU tunes its own executor at once,
//                     so the run waits for one GPU's tuning.
//   weight broadcast: the initial weights copied from GPU0 to every other GPU (MXNet's kvstore
//                     init and first pull), as the slowest route's copy time of all weights: a
//                     lower bound, since the copies share links.
// Not modelled, for want of a sourced figure: process and communicator start-up, loading the
// data set's index.
#pragma once

#include "sim/replay/replay.hpp"

namespace gpuscale::sim {

struct RunSetupCost {
  double autotune_s = 0;
  double weight_broadcast_s = 0;
  double total_s() const { return autotune_s + weight_broadcast_s; }
};

RunSetupCost run_setup_cost(const ReplaySetup& setup);

}  // namespace gpuscale::sim
