#include "validation/report/sweep_plots.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "sim/experiment/machine_setup.hpp"
#include "validation/report/figure_files.hpp"
#include "validation/report/svg_chart.hpp"
#include "validation/report/sweep_series.hpp"
#include "validation/report/topology_svg.hpp"

namespace gpuscale::report {
namespace {

const std::vector<std::string> kPalette = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                           "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
constexpr const char* kPartColour = "#555555";  // legend swatches of a bar's parts
constexpr double kMid = 0.6, kPale = 0.3, kFaint = 0.12;  // opacities of a bar's upper parts

std::string colour(size_t index) { return kPalette[index % kPalette.size()]; }

std::string title(const FigureGroup& group, const std::string& what) {
  return fmt::format("{}: {}{}", group.label, what,
                     group.context.empty() ? "" : " (" + group.context + ")");
}

std::string gpus_label(int gpus) { return fmt::format("{} GPU{}", gpus, gpus == 1 ? "" : "s"); }

const sweep::SweepRow* row_at(const Series& series, int gpus) {
  const auto it = std::find_if(series.rows.begin(), series.rows.end(), [&](const auto* row) {
    return row->run.config.gpus == gpus;
  });
  return it == series.rows.end() ? nullptr : *it;
}

// Speedup over one GPU, or with `efficiency` speedup / GPUs in %. Runs without a speedup (no
// one-GPU run to compare with) are left out.
LineChart scaling_chart(const FigureGroup& group, bool efficiency) {
  LineChart chart{title(group, efficiency ? "scaling efficiency" : "speedup over 1 GPU"),
                  "GPUs",
                  efficiency ? "speedup / GPUs (%)" : "speedup",
                  {},
                  {}};
  LineSeries ideal{"ideal", "#999999", true, true, Marker::None, {}, {}};
  for (size_t i = 0; i < group.gpus.size(); ++i) {
    chart.categories.push_back(std::to_string(group.gpus[i]));
    ideal.points.emplace_back(static_cast<int>(i), efficiency ? 100.0 : group.gpus[i]);
  }
  chart.series.push_back(ideal);
  for (size_t si = 0; si < group.series.size(); ++si) {
    LineSeries line{group.series[si].label, colour(si), false, true, Marker::Circle, {}, {}};
    for (size_t i = 0; i < group.gpus.size(); ++i) {
      const sweep::SweepRow* row = row_at(group.series[si], group.gpus[i]);
      if (row == nullptr || row->result.speedup <= 0) continue;
      const double scale = efficiency ? 100.0 / group.gpus[i] : 1.0;
      line.points.emplace_back(static_cast<int>(i), scale * row->result.speedup);
      if (const sim::IterationSpread& s = row->result.spread; s.samples > 0) {
        line.band.emplace_back(scale * s.speedup_p10, scale * s.speedup_p90);
      }
    }
    chart.series.push_back(line);
  }
  return chart;
}

// The legend of bar charts: a colour per series, then a shade per part of a bar.
std::vector<LegendEntry> bar_legend(const FigureGroup& group,
                                    const std::vector<LegendEntry>& parts) {
  std::vector<LegendEntry> legend;
  for (size_t si = 0; si < group.series.size(); ++si)
    legend.push_back({group.series[si].label, colour(si), 1});
  legend.insert(legend.end(), parts.begin(), parts.end());
  return legend;
}

// An iteration split in four: FP+BP; the other kernels (the updates); and the time rank 0's GPU
// is not running its kernels (exposed_comm_s), split into the wait for the next batch
// (input_wait_s) and the rest, communication and host work. (ResultRow's WU is narrower: only
// what runs after backward.)
BarChart breakdown_chart(const FigureGroup& group) {
  BarChart chart{title(group, "time per iteration"), "ms per iteration", {}, {}};
  for (int gpus : group.gpus) {
    BarGroup bars{gpus_label(gpus), {}};
    for (size_t si = 0; si < group.series.size(); ++si) {
      const sweep::SweepRow* row = row_at(group.series[si], gpus);
      if (row == nullptr) {
        bars.bars.emplace_back();  // keeps each series in its place within the group
        continue;
      }
      const sim::ResultRow& r = row->result;
      const double update_s = std::max(0.0, r.iteration_s - r.fpbp_s - r.exposed_comm_s);
      const double input_s = std::min(r.input_wait_s, r.exposed_comm_s);
      bars.bars.push_back({{{1e3 * r.fpbp_s, colour(si), 1},
                            {1e3 * update_s, colour(si), kMid},
                            {1e3 * (r.exposed_comm_s - input_s), colour(si), kPale},
                            {1e3 * input_s, colour(si), kFaint}}});
    }
    chart.groups.push_back(bars);
  }
  chart.legend = bar_legend(group, {{"FP+BP", kPartColour, 1},
                                    {"update kernels", kPartColour, kMid},
                                    {"communication and host, exposed", kPartColour, kPale},
                                    {"waiting for the next batch", kPartColour, kFaint}});
  return chart;
}

BarChart memory_chart(const FigureGroup& group) {
  BarChart chart{title(group, "memory per GPU"), "GB", {}, {}};
  for (int gpus : group.gpus) {
    BarGroup bars{gpus_label(gpus), {}};
    for (size_t si = 0; si < group.series.size(); ++si) {
      const sweep::SweepRow* row = row_at(group.series[si], gpus);
      if (row == nullptr) {
        bars.bars.insert(bars.bars.end(), 2, Bar{});
        continue;
      }
      bars.bars.push_back({{{row->result.memory_gpu0_gb, colour(si), 1}}});
      bars.bars.push_back({{{row->result.memory_max_other_gb, colour(si), kPale}}});
    }
    chart.groups.push_back(bars);
  }
  chart.legend = bar_legend(
      group, {{"GPU0", kPartColour, 1}, {"fullest other GPU", kPartColour, kPale}});
  return chart;
}

// The runs the heat maps show (see the header).
std::vector<const sweep::SweepRow*> heat_map_rows(const sweep::Study& study,
                                                  const std::vector<sweep::SweepRow>& rows) {
  if (rows.empty()) return {};
  const int batch =
      study.runs.empty() ? rows.front().run.config.batch : study.runs.front().config.batch;
  std::vector<const sweep::SweepRow*> chosen;
  std::map<std::string, size_t> index_of;
  for (const sweep::SweepRow& row : rows) {
    if (row.run.config.batch != batch) continue;
    const std::string key =
        row.run.machine.label + "\n" + row.run.config.workload + "\n" + row.run.config.comm;
    const auto [it, fresh] = index_of.emplace(key, chosen.size());
    if (fresh) {
      chosen.push_back(&row);
    } else if (row.run.config.gpus > chosen[it->second]->run.config.gpus) {
      chosen[it->second] = &row;
    }
  }
  std::erase_if(chosen, [](const auto* row) { return row->result.link_uses.empty(); });
  // Machines take turns: each machine's first map, then each one's second, and so on.
  std::map<std::string, int> maps_of_machine;
  std::vector<std::pair<int, const sweep::SweepRow*>> turns;
  for (const sweep::SweepRow* row : chosen)
    turns.emplace_back(maps_of_machine[row->run.machine.label]++, row);
  std::stable_sort(turns.begin(), turns.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  chosen.clear();
  for (size_t i = 0; i < std::min(turns.size(), kMaxHeatMaps); ++i)
    chosen.push_back(turns[i].second);
  return chosen;
}

Figure heat_map(const sweep::SweepRow& row) {
  const sweep::Run& run = row.run;
  const topo::Topology machine = sim::machine_for(run.machine.topology, run.machine.overrides,
                                                  run.config.gpus, run.machine.document);
  const std::string name = fmt::format("links-{}-{}-{}.svg", file_slug(run.machine.label),
                                       file_slug(workload_label(run)), file_slug(run.config.comm));
  const std::string caption =
      fmt::format("{}: link utilisation, {} with {} on {} GPUs, batch {}", run.machine.label,
                  workload_label(run), run.config.comm, run.config.gpus, run.config.batch);
  return {name, render_topology_svg(machine, row.result.link_uses, caption)};
}

}  // namespace

std::vector<std::string> write_sweep_plots(const sweep::Study& study,
                                           const std::vector<sweep::SweepRow>& rows,
                                           const std::string& dir) {
  std::vector<Figure> figures;
  for (const FigureGroup& group : group_rows(study, rows)) {
    if (group.gpus.size() > 1) {
      figures.emplace_back("speedup-" + group.name + ".svg",
                           render_svg(scaling_chart(group, false)));
      figures.emplace_back("efficiency-" + group.name + ".svg",
                           render_svg(scaling_chart(group, true)));
    }
    figures.emplace_back("breakdown-" + group.name + ".svg", render_svg(breakdown_chart(group)));
    figures.emplace_back("memory-" + group.name + ".svg", render_svg(memory_chart(group)));
  }
  for (const sweep::SweepRow* row : heat_map_rows(study, rows)) figures.push_back(heat_map(*row));
  return write_figures(dir, figures);
}

}  // namespace gpuscale::report
