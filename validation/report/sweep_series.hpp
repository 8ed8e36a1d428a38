// How a sweep's runs are split into figures and, within a figure, into series (a line, or a bar
// colour). One figure per workload; the other varied axes, except the GPU count along x, tell
// the series apart. When some figure would hold more than kMaxSeries series, axes move from the
// series to the figures until none does, so that every legend stays short and every colour
// distinct: the batch first (time and memory scale with it), then the axis with the fewest
// values, which keeps the most series side by side (7 machines x 2 methods: a figure per
// method), the exchange method last on a tie (3 methods x 3 fusion sizes: a figure per size).
#pragma once

#include <string>
#include <vector>

#include "validation/studies/study.hpp"
#include "validation/studies/sweep_row.hpp"

namespace gpuscale::report {

inline constexpr size_t kMaxSeries = 8;

struct Series {
  std::string label;                         // the values of the series' axes: "dgx1-v100 nccl"
  std::vector<const sweep::SweepRow*> rows;  // in row order
};

struct FigureGroup {
  std::string name;       // for file names: "resnet-50", "resnet-50-batch-32"
  std::string label;      // for titles: "resnet-50, batch 32"
  std::string context;    // what no axis varies, for titles: "dgx1-v100, nccl, batch 32"
  std::vector<int> gpus;  // the GPU counts of its runs, ascending
  std::vector<Series> series;
};

// The figures' groups, in the order of their first row.
std::vector<FigureGroup> group_rows(const sweep::Study& study,
                                    const std::vector<sweep::SweepRow>& rows);

// A study axis's value for a run, as figures show it: "dgx1-v100", "batch 32", "fusion 64 MB".
// Throws std::logic_error for an axis it does not know.
std::string axis_value(const std::string& axis, const sweep::Run& run);

// A workload as figures name it: a model file's stem, else the shipped model's name.
std::string workload_label(const sweep::Run& run);

}  // namespace gpuscale::report
