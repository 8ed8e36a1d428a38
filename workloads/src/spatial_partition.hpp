// Spatial (sample-decomposed) parallelism: each sample split over a group of GPUs by height and
// width, as LBANN's distributed convolutions do it (Dryden et al., "Improving Strong-Scaling of
// CNN Training by Exploiting Finer-Grained Parallelism", IPDPS 2019; the seed
// scalable-cnn-training-hpc-abstract.txt). A GPU of the group holds one block of every layer's
// activations (the shard: ceil(H / rows) x ceil(W / cols) of each spatial layer) and the whole
// weights. Where a window reaches over the block's border its GPU needs its neighbours' border
// rows and columns, the halo: in forward from the layer's input x, in backward-data from the
// output gradient dL/dy (the seed's two exchanges). The interior of the block, which needs no
// halo, is computed while the halo travels; the border after it arrives. Statistics of batch
// normalisation and a global pool's partial sums are summed over the group. Gradients of the
// weights are then allreduced over every GPU, as in data parallelism.
// docs/replay.md, "Spatial parallelism", says what the replay makes of this plan.
#pragma once

#include <vector>

#include "workloads/src/workload.hpp"

namespace gpuscale::wl {

// How a group of GPUs splits each sample: a grid of `rows` x `cols` blocks; the group's member m
// holds block (m / cols, m % cols).
struct SpatialSplit {
  int rows = 1;
  int cols = 1;
  int ways() const { return rows * cols; }
  bool splits() const { return ways() > 1; }
};

// The squarest grid of `ways` blocks (rows >= cols): 2 -> 2x1, 4 -> 2x2, 8 -> 4x2, 16 -> 4x4. A
// square grid has the shortest borders, hence the smallest halos. Throws ConfigError for
// ways < 1.
SpatialSplit spatial_split(int ways);

// The workload as one GPU of the group holds it: every layer whose output is spatial (height or
// width above 1) keeps ceil(H / rows) x ceil(W / cols) of it, inputs alike; vectors (after a global
// pool or a fully connected layer) stay whole. The largest block, so the slowest GPU's. Throws
// ConfigError naming the layer where a fully connected layer reads a spatial input (it needs the
// whole sample: this model splits convolutional layers only).
Workload spatial_shard(const Workload& whole, const SpatialSplit& split);

// Elements one GPU receives from the group member at grid offset (d_row, d_col).
struct HaloTransfer {
  int d_row = 0;
  int d_col = 0;
  double elements_per_sample = 0;  // halo rows or columns; a batch carries `batch` of them
  double elements_fixed = 0;       // independent of the batch: batch-norm statistics
};

// One pass of one layer on the GPU holding block (row, col).
struct SpatialPass {
  std::vector<HaloTransfer> receives;
  // The share of the pass's work that needs nothing received and so overlaps the transfers.
  double interior_fraction = 1;
  // Whether the transfers complete a reduction over the group (statistics, partial sums) that
  // the rest of the pass needs, rather than a halo for the border.
  bool group_reduction = false;
};

struct SpatialLayer {
  SpatialPass forward;
  SpatialPass backward_data;
};

// The halo exchanges and group reductions of every layer of `shard` (spatial_shard of `whole`)
// for the GPU at block (row, col) of `split`: what it receives, from whom, and how much of each
// pass can run before. Parallel to the workload's layers.
std::vector<SpatialLayer> spatial_exchanges(const Workload& whole, const Workload& shard,
                                            const SpatialSplit& split, int row, int col);

// The halo elements per sample that the fullest member of a group (`members`: spatial_exchanges
// of each) keeps until backward: every halo its forward passes receive, since a convolution's
// backward-weights reads its input block again, halo included. Group sums are not kept.
double kept_halo_elements_per_sample(const std::vector<std::vector<SpatialLayer>>& members);

}  // namespace gpuscale::wl
