// Which GPU reduces each parameter tensor in MXNet's `kvstore=device` (the study's "P2P").
//
// MXNet 1.x, src/kvstore/comm.h, CommDevice::InitMergeBuffer (brief §7): keys are sorted by size,
// largest first, and each goes to the GPU with the fewest bytes assigned so far. MXNet scans an
// unordered map there, so its tie-break is unspecified; we break ties towards the lowest GPU, which
// puts the largest key on GPU0 as the study observed (GPU0 uses the most memory).
#pragma once

#include <vector>

namespace gpuscale::wl {

enum class ReducerPolicy {
  Greedy,    // MXNet's size-balanced assignment
  AllOnGpu0  // every key reduced on GPU0 (a parameter-server on one GPU)
};

// For each tensor (given by its size in bytes, in any order), the index of its reducing GPU in
// [0, gpus). Stable: equal sizes keep their input order.
std::vector<int> assign_reducers(const std::vector<double>& tensor_bytes, int gpus,
                                 ReducerPolicy policy);

}  // namespace gpuscale::wl
