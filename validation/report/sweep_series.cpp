#include "validation/report/sweep_series.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "validation/report/figure_files.hpp"

namespace gpuscale::report {
namespace {

bool varied(const sweep::Study& study, const std::string& axis) {
  return std::find(study.axes.begin(), study.axes.end(), axis) != study.axes.end();
}

std::string values_of(const std::vector<std::string>& axes, const sweep::Run& run,
                      const std::string& separator) {
  std::string out;
  for (const std::string& axis : axes) {
    out += (out.empty() ? "" : separator) + axis_value(axis, run);
  }
  return out;
}

size_t distinct_values(const std::vector<sweep::SweepRow>& rows, const std::string& axis) {
  std::set<std::string> values;
  for (const sweep::SweepRow& row : rows) values.insert(axis_value(axis, row.run));
  return values.size();
}

// The series axis to split figures by next: the batch, else the axis with the fewest values,
// which keeps the most series side by side; on a tie, the exchange method and then the machine
// stay series longest, being what studies most often compare.
std::string next_split(const std::vector<sweep::SweepRow>& rows,
                       const std::vector<std::string>& series_axes) {
  if (std::find(series_axes.begin(), series_axes.end(), "batch") != series_axes.end())
    return "batch";
  auto rank = [&](const std::string& axis) {
    return std::make_pair(distinct_values(rows, axis),
                          axis == "comm" ? 2 : axis == "machine" ? 1 : 0);
  };
  return *std::min_element(series_axes.begin(), series_axes.end(),
                           [&](const std::string& a, const std::string& b) {
                             return rank(a) < rank(b);
                           });
}

size_t most_series(const std::vector<sweep::SweepRow>& rows,
                   const std::vector<std::string>& figure_axes,
                   const std::vector<std::string>& series_axes) {
  std::map<std::string, std::set<std::string>> series_per_figure;
  for (const sweep::SweepRow& row : rows) {
    series_per_figure[values_of(figure_axes, row.run, "\n")].insert(
        values_of(series_axes, row.run, "\n"));
  }
  size_t most = 0;
  for (const auto& [figure, series] : series_per_figure) most = std::max(most, series.size());
  return most;
}

// The values every run shares that a reader needs to read a figure: its machine, exchange method
// and batch when no axis varies them, and weak scaling.
std::string context_of(const sweep::Study& study, const sweep::Run& run) {
  std::vector<std::string> parts;
  for (const char* axis : {"machine", "comm", "batch"}) {
    if (!varied(study, axis)) parts.push_back(axis_value(axis, run));
  }
  if (run.experiment.scaling == sim::Scaling::Weak) parts.emplace_back("weak scaling");
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out;
}

}  // namespace

std::string workload_label(const sweep::Run& run) {
  const std::string& workload = run.config.workload;
  const bool is_file = workload.find('/') != std::string::npos || workload.ends_with(".yaml");
  return is_file ? std::filesystem::path(workload).stem().string() : workload;
}

std::string axis_value(const std::string& axis, const sweep::Run& run) {
  if (axis == "machine") return run.machine.label;
  if (axis == "workload") return workload_label(run);
  if (axis == "comm") return run.config.comm;
  if (axis == "routing")
    return run.experiment.routing.empty() ? "default routing" : run.experiment.routing;
  if (axis == "fusion_mb") return fmt::format("fusion {:g} MB", sim::allreduce_buffer_mb(run.experiment));
  if (axis == "protocol") return "protocol " + run.experiment.protocol;
  if (axis == "decode_threads")
    return fmt::format("{} decode threads", sim::decode_threads_of(run.experiment));
  if (axis == "batch") return fmt::format("batch {}", run.config.batch);
  if (axis == "gpus") return fmt::format("{} GPUs", run.config.gpus);
  if (axis == "spatial") return fmt::format("{}-way spatial", run.experiment.spatial);
  if (axis == "precision") return run.precision;
  throw std::logic_error("the sweep figures do not know the axis '" + axis + "'");
}

std::vector<FigureGroup> group_rows(const sweep::Study& study,
                                    const std::vector<sweep::SweepRow>& rows) {
  std::vector<std::string> figure_axes, series_axes;
  for (const std::string& axis : study.axes) {
    if (axis == "workload") {
      figure_axes.push_back(axis);
    } else if (axis != "gpus") {
      series_axes.push_back(axis);
    }
  }
  while (!series_axes.empty() && most_series(rows, figure_axes, series_axes) > kMaxSeries) {
    const std::string axis = next_split(rows, series_axes);
    std::erase(series_axes, axis);
    figure_axes.push_back(axis);
  }
  // A figure is always named by its workload, varied or not; then the axes split off, in the
  // study's order.
  std::vector<std::string> name_axes = {"workload"};
  for (const std::string& axis : study.axes) {
    if (axis != "workload" &&
        std::find(figure_axes.begin(), figure_axes.end(), axis) != figure_axes.end())
      name_axes.push_back(axis);
  }

  std::vector<FigureGroup> groups;
  std::map<std::string, size_t> group_of;
  for (const sweep::SweepRow& row : rows) {
    const std::string label = values_of(name_axes, row.run, ", ");
    auto [it, fresh] = group_of.emplace(label, groups.size());
    if (fresh) {
      groups.push_back({file_slug(label), label, context_of(study, row.run), {}, {}});
    }
    FigureGroup& group = groups[it->second];
    const std::string series_label =
        series_axes.empty() ? row.run.config.comm : values_of(series_axes, row.run, " ");
    auto series = std::find_if(group.series.begin(), group.series.end(),
                               [&](const Series& s) { return s.label == series_label; });
    if (series == group.series.end()) {
      group.series.push_back({series_label, {}});
      series = group.series.end() - 1;
    }
    series->rows.push_back(&row);
    const int gpus = row.run.config.gpus;
    const auto at = std::lower_bound(group.gpus.begin(), group.gpus.end(), gpus);
    if (at == group.gpus.end() || *at != gpus) group.gpus.insert(at, gpus);
  }
  return groups;
}

}  // namespace gpuscale::report
