// Lines the commands that simulate configurations (run, validate, sweep) print alike.
#pragma once

#include <string>
#include <vector>

#include "sim/experiment/experiment.hpp"

namespace gpuscale::cli {

// "[3/40] lenet p2p 4 GPUs batch 16: 148.16 ms per iteration": a configuration simulated.
std::string progress_line(int done, int total, const sim::ResultRow& row);

// "exchange: nccl = mxnet: horovod fusion 64 MiB every 5 ms\n", one line per method and the
// exchange the framework ran it with, in order of first appearance among `rows`.
std::string exchange_legend(const std::vector<const sim::ResultRow*>& rows);

}  // namespace gpuscale::cli
