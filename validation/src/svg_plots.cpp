#include "validation/src/svg_plots.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "validation/report/figure_files.hpp"
#include "validation/report/svg_chart.hpp"

namespace gpuscale::validation {
namespace {

using report::Bar;
using report::BarChart;
using report::BarGroup;
using report::LineChart;
using report::LineSeries;
using report::Marker;
using report::render_svg;

const std::vector<std::string> kPalette = {"#1f77b4", "#d62728", "#2ca02c",
                                           "#9467bd", "#ff7f0e", "#8c564b"};
constexpr double kPale = 0.35;  // measured bars, WU segments

std::string colour(size_t index) { return kPalette[index % kPalette.size()]; }

const Table& table_of(const Suite& suite, const std::string& id) {
  return *std::find_if(suite.tables.begin(), suite.tables.end(),
                       [&](const Table& t) { return t.id == id; });
}

std::vector<std::string> gpu_categories(const Setup& setup) {
  std::vector<std::string> categories;
  for (int g : setup.gpus) categories.push_back(std::to_string(g));
  return categories;
}

int category_of(const Setup& setup, int gpus) {
  return static_cast<int>(std::find(setup.gpus.begin(), setup.gpus.end(), gpus) -
                          setup.gpus.begin());
}

LineChart speedup_chart(const Suite& suite, const Metrics& metrics, const Comparison& c,
                        const std::string& net) {
  const Setup& setup = suite.setup;
  const int batch = suite.batches_of(net).front();
  const std::vector<std::string> methods = suite.methods_of(net);
  LineChart chart{fmt::format("{}: speedup over 1 GPU, batch {} per GPU", net, batch),
                  "GPUs",
                  "speedup",
                  gpu_categories(setup),
                  {}};
  LineSeries ideal{"ideal", "#999999", true, true, Marker::None, {}, {}};
  for (size_t i = 0; i < setup.gpus.size(); ++i)
    ideal.points.emplace_back(static_cast<int>(i), setup.gpus[i]);
  chart.series.push_back(ideal);
  for (size_t mi = 0; mi < methods.size(); ++mi) {
    const std::string& method = methods[mi];
    LineSeries predicted{method + " predicted", colour(mi), false, true, Marker::Circle, {}, {}};
    for (size_t i = 0; i < setup.gpus.size(); ++i) {
      predicted.points.emplace_back(static_cast<int>(i),
                                    metrics.speedup({net, method, setup.gpus[i], batch}));
    }
    chart.series.push_back(predicted);
    LineSeries measured{method + " measured", colour(mi), true, true, Marker::Square, {}, {}};
    LineSeries bounds{
        method + " bound (measured <)", colour(mi), false, false, Marker::Triangle, {}, {}};
    for (const PointResult& p : c.points) {
      const Point& x = p.point;
      if (table_of(suite, p.table).metric != Metric::Speedup || x.network != net ||
          x.method != method || x.batch != batch || x.scaling != sim::Scaling::Strong ||
          !x.machine.empty())
        continue;
      if (measured.points.empty())
        measured.points.emplace_back(category_of(setup, 1), 1.0);  // by definition
      measured.points.emplace_back(category_of(setup, x.gpus), x.measured);
    }
    for (const BoundResult& b : c.bounds) {
      const Bound& x = b.bound;
      if (table_of(suite, b.table).metric != Metric::Speedup || x.network != net ||
          x.method != method || x.batch != batch || x.scaling != sim::Scaling::Strong ||
          !x.machine.empty() || !x.below)
        continue;
      bounds.points.emplace_back(category_of(setup, x.gpus), *x.below);
    }
    if (!measured.points.empty()) chart.series.push_back(measured);
    if (!bounds.points.empty()) chart.series.push_back(bounds);
  }
  return chart;
}

BarChart breakdown_chart(const Suite& suite, const Metrics& metrics, const std::string& net) {
  const int batch = suite.batches_of(net).front();
  const std::vector<std::string> methods = suite.methods_of(net);
  BarChart chart{fmt::format("{}: predicted FP+BP and WU per epoch, batch {} per GPU", net, batch),
                 "seconds per epoch",
                 {},
                 {}};
  for (int g : suite.setup.gpus) {
    BarGroup group{fmt::format("{} GPU{}", g, g == 1 ? "" : "s"), {}};
    for (size_t mi = 0; mi < methods.size(); ++mi) {
      const RunKey run{net, methods[mi], g, batch};
      group.bars.push_back({{{metrics.fpbp_epoch_s(run), colour(mi), 1},
                             {metrics.wu_epoch_s(run), colour(mi), kPale}}});
    }
    chart.groups.push_back(group);
  }
  for (size_t mi = 0; mi < methods.size(); ++mi) {
    chart.legend.push_back({methods[mi] + " FP+BP", colour(mi), 1});
    chart.legend.push_back({methods[mi] + " WU", colour(mi), kPale});
  }
  return chart;
}

bool is_memory(Metric m) {
  return m == Metric::MemoryPretrainGb || m == Metric::MemoryGpu0Gb || m == Metric::MemoryGpuxGb;
}

// Groups by batch; in each, one measured and one predicted bar per memory table.
BarChart memory_chart(const Suite& suite, const Comparison& c, const std::string& net) {
  BarChart chart{fmt::format("{}: memory per GPU, measured and predicted", net), "GB", {}, {}};
  std::vector<std::string> tables;
  for (const Table& t : suite.tables) {
    if (is_memory(t.metric)) tables.push_back(t.id);
  }
  for (int batch : suite.setup.batches) {
    BarGroup group{fmt::format("batch {}", batch), {}};
    for (size_t ti = 0; ti < tables.size(); ++ti) {
      for (const PointResult& p : c.points) {
        if (p.table != tables[ti] || p.point.network != net || p.point.batch != batch) continue;
        group.bars.push_back({{{p.point.measured, colour(ti), kPale}}});
        group.bars.push_back({{{p.predicted, colour(ti), 1}}});
      }
    }
    if (!group.bars.empty()) chart.groups.push_back(group);
  }
  for (size_t ti = 0; ti < tables.size(); ++ti) {
    chart.legend.push_back({tables[ti] + " measured", colour(ti), kPale});
    chart.legend.push_back({tables[ti] + " predicted", colour(ti), 1});
  }
  return chart;
}

}  // namespace

std::vector<std::string> write_plots(const Suite& suite, const Metrics& metrics,
                                     const Comparison& comparison, const std::string& dir) {
  std::vector<report::Figure> figures;
  for (const NameMapping& network : suite.networks) {
    const std::string& net = network.study;
    figures.emplace_back("speedup-" + report::file_slug(net) + ".svg",
                         render_svg(speedup_chart(suite, metrics, comparison, net)));
    figures.emplace_back("breakdown-" + report::file_slug(net) + ".svg",
                         render_svg(breakdown_chart(suite, metrics, net)));
    const BarChart memory = memory_chart(suite, comparison, net);
    if (!memory.groups.empty())
      figures.emplace_back("memory-" + report::file_slug(net) + ".svg", render_svg(memory));
  }
  return report::write_figures(dir, figures);
}

}  // namespace gpuscale::validation
