#include "workloads/src/spatial_partition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscale::wl {
namespace {

long ceil_div(long a, long b) { return (a + b - 1) / b; }

bool is_spatial(const Shape& s) { return s.height > 1 || s.width > 1; }

// A layer whose window reaches over a block's border: a convolution or a pooling wider than 1x1.
bool has_window(const Layer& l) {
  const LayerParams& p = l.params;
  if (l.type == LayerType::Pool && p.global_pool) return false;
  return (l.type == LayerType::Conv || l.type == LayerType::Pool) &&
         (p.kernel_h > 1 || p.kernel_w > 1 || p.pad_h > 0 || p.pad_w > 0);
}

// The halo of one dimension: what a block needs from its neighbour before (`before`) and after
// it (`after`), in rows (or columns) of the tensor the exchange carries, and how many rows of the
// pass's result at each border wait for them (`border_before`, `border_after`).
struct Reach {
  long before = 0, after = 0;
  long border_before = 0, border_after = 0;
};

// Forward, from x: output o reads inputs o*s - p .. o*s - p + k - 1, so a block of outputs reads
// p rows above its inputs and k - s - p below, and the first ceil(p / s) and last
// ceil((k - s - p) / s) output rows wait for them.
Reach forward_reach(int k, int s, int p, bool has_before, bool has_after) {
  Reach r;
  if (has_before) r.before = p;
  if (has_after) r.after = std::max(0, k - s - p);
  r.border_before = ceil_div(r.before, s);
  r.border_after = ceil_div(r.after, s);
  return r;
}

// Backward-data, from dL/dy: input row i receives from the outputs o with o*s in
// [i + p - k + 1, i + p], so a block needs ceil((k - 1 - p) / s) gradient rows from above and
// ceil(p / s) from below; s input rows per gradient row wait for them.
Reach backward_data_reach(int k, int s, int p, bool has_before, bool has_after) {
  Reach r;
  if (has_before) r.before = ceil_div(std::max(0, k - 1 - p), s);
  if (has_after) r.after = ceil_div(p, s);
  r.border_before = r.before * s;
  r.border_after = r.after * s;
  return r;
}

// Receives of a halo exchange on a tensor of per-sample block shape `block` (what the neighbours
// hold), and the share of the result block `result` that needs none of them.
SpatialPass halo_pass(const Reach& rows, const Reach& cols, const Shape& block,
                      const Shape& result) {
  SpatialPass pass;
  const auto c = static_cast<double>(block.channels);
  auto receive = [&](int d_row, int d_col, double elements) {
    if (elements > 0) pass.receives.push_back({d_row, d_col, elements, 0});
  };
  const long up = std::min(rows.before, block.height), down = std::min(rows.after, block.height);
  const long left = std::min(cols.before, block.width), right = std::min(cols.after, block.width);
  receive(-1, 0, c * static_cast<double>(up * block.width));
  receive(1, 0, c * static_cast<double>(down * block.width));
  receive(0, -1, c * static_cast<double>(left * block.height));
  receive(0, 1, c * static_cast<double>(right * block.height));
  receive(-1, -1, c * static_cast<double>(up * left));  // corners, from the diagonal neighbours
  receive(-1, 1, c * static_cast<double>(up * right));
  receive(1, -1, c * static_cast<double>(down * left));
  receive(1, 1, c * static_cast<double>(down * right));
  auto inner = [](long extent, long a, long b) {
    return extent <= 0 ? 0.0 : static_cast<double>(std::max(0L, extent - a - b)) / static_cast<double>(extent);
  };
  pass.interior_fraction = inner(result.height, rows.border_before, rows.border_after) *
                           inner(result.width, cols.border_before, cols.border_after);
  return pass;
}

// A sum over the group: `per_sample` and `fixed` elements from every other member, once
// `before` of the pass's work is done.
SpatialPass group_sum(const SpatialSplit& split, int row, int col, double per_sample, double fixed,
                      double before) {
  SpatialPass pass;
  pass.group_reduction = true;
  pass.interior_fraction = before;
  for (int r = 0; r < split.rows; ++r) {
    for (int c = 0; c < split.cols; ++c) {
      if (r != row || c != col) pass.receives.push_back({r - row, c - col, per_sample, fixed});
    }
  }
  return pass;
}

}  // namespace

SpatialSplit spatial_split(int ways) {
  if (ways < 1) throw ConfigError({}, fmt::format("spatial ways must be at least 1, not {}", ways));
  int cols = static_cast<int>(std::sqrt(static_cast<double>(ways)));
  while (ways % cols != 0) --cols;  // ends at 1 at the latest
  return {ways / cols, cols};
}

Workload spatial_shard(const Workload& whole, const SpatialSplit& split) {
  Workload shard = whole;
  auto block_of = [&](Shape s) {
    if (is_spatial(s)) {
      s.height = ceil_div(s.height, split.rows);
      s.width = ceil_div(s.width, split.cols);
    }
    return s;
  };
  for (size_t l = 0; l < shard.layers.size(); ++l) {
    Layer& layer = shard.layers[l];
    if (split.splits() && layer.type == LayerType::Fc && is_spatial(layer.input)) {
      throw ConfigError(layer.origin,
                        fmt::format("spatial parallelism cannot split '{}' of '{}': a fully "
                                    "connected layer reads its whole {} input; gpuscale splits "
                                    "convolutional layers, so use a global pool before it or no "
                                    "--spatial",
                                    layer.name, whole.name, to_string(layer.input)));
    }
    layer.output = block_of(layer.output);
    layer.input = layer.inputs.empty() ? block_of(layer.input)
                                       : shard.layers[static_cast<size_t>(layer.inputs[0])].output;
  }
  return shard;
}

std::vector<SpatialLayer> spatial_exchanges(const Workload& whole, const Workload& shard,
                                            const SpatialSplit& split, int row, int col) {
  std::vector<SpatialLayer> plan(shard.layers.size());
  if (!split.splits()) return plan;
  const bool up = row > 0, down = row + 1 < split.rows;
  const bool left = col > 0, right = col + 1 < split.cols;
  for (size_t l = 1; l < shard.layers.size(); ++l) {
    const Layer& layer = shard.layers[l];
    const LayerParams& p = layer.params;
    if (has_window(layer) && is_spatial(whole.layers[l].input)) {
      plan[l].forward = halo_pass(forward_reach(p.kernel_h, p.stride_h, p.pad_h, up, down),
                                  forward_reach(p.kernel_w, p.stride_w, p.pad_w, left, right),
                                  layer.input, layer.output);
      plan[l].backward_data =
          halo_pass(backward_data_reach(p.kernel_h, p.stride_h, p.pad_h, up, down),
                    backward_data_reach(p.kernel_w, p.stride_w, p.pad_w, left, right),
                    layer.output, layer.input);
    } else if (layer.type == LayerType::BatchNorm && is_spatial(whole.layers[l].output)) {
      // Forward sums x and x^2 per channel, backward dy and dy * x_hat, over the whole samples:
      // two per-channel sums, halfway through each pass (the statistics, then the normalisation).
      const auto sums = 2.0 * static_cast<double>(layer.output.channels);
      plan[l].forward = group_sum(split, row, col, 0, sums, 0.5);
      plan[l].backward_data = group_sum(split, row, col, 0, sums, 0.5);
    } else if (layer.type == LayerType::Pool && p.global_pool && is_spatial(whole.layers[l].input)) {
      // Each block pools its part; the partial sums add up over the group. The gradient of the
      // pooled vector is already on every member (the layers after it run on each).
      plan[l].forward =
          group_sum(split, row, col, static_cast<double>(layer.output.channels), 0, 1.0);
    }
  }
  return plan;
}

double kept_halo_elements_per_sample(const std::vector<std::vector<SpatialLayer>>& members) {
  double fullest = 0;
  for (const std::vector<SpatialLayer>& member : members) {
    double kept = 0;
    for (const SpatialLayer& layer : member) {
      if (layer.forward.group_reduction) continue;
      for (const HaloTransfer& h : layer.forward.receives) kept += h.elements_per_sample;
    }
    fullest = std::max(fullest, kept);
  }
  return fullest;
}

}  // namespace gpuscale::wl
