// Batch normalisation fused with the ReLU after it, and with a residual's sum before that ReLU,
// as cuDNN runs them (cudnnBatchNormalizationForwardTrainingEx and BackwardEx with
// CUDNN_BATCHNORM_OPS_BN_ACTIVATION or CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION): one kernel writes
// y = ReLU(BN(x)) or ReLU(BN(x) + z) in forward, and one reads x, y and dy and writes dx (and dz,
// the addend's gradient) in backward. NVIDIA's MLPerf v0.5 ResNet-50 under MXNet asks for both
// (`--fuse-bn-relu 1 --fuse-bn-add-relu 1`, resnet-v1b-fl.py's BatchNormAddRelu); a workload
// file asks with `fusions:` (docs/workload-schema.md, "Fused batch normalisation").
#pragma once

#include <string>
#include <vector>

#include "workloads/src/workload.hpp"

namespace gpuscale::wl {

struct BatchNormFusions {
  bool relu = false;      // batchnorm_relu: a ReLU reading only a batch norm runs inside it
  bool add_relu = false;  // batchnorm_add_relu: ReLU(batch norm + shortcut) runs inside the norm
};

// The names a workload file's `fusions:` list takes.
const std::vector<std::string>& batchnorm_fusion_names();

// Rewrites `w`'s graph: each fused ReLU (and residual sum) leaves it, the batch norm that runs it
// takes its place (its consumers read the norm), marked `fused_relu`, with the sum's other input,
// the addend, as its second input. A batch norm is fused only where the ReLU (or the sum) is the
// only reader of its output and the sum is a plain one (scale 1).
void fuse_batchnorms(Workload& w, const BatchNormFusions& fusions);

}  // namespace gpuscale::wl
