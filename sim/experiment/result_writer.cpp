#include "sim/experiment/result_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "topologies/core/csv.hpp"

namespace gpuscale::sim {
namespace {

bool in_json(const Column& column, const OutputRow& row) {
  switch (column.shown) {
    case Shown::Study: return row.study.has_value();
    case Shown::Sampled: return row.result->spread.samples > 0;
    case Shown::TableOnly: return false;
    default: return true;
  }
}

// The CSV's columns: the schema's, less those its rows lack, a Split column last where a row
// splits samples.
std::vector<std::string> csv_columns(const std::vector<JsonRow>& rows, RowsOf rows_of) {
  const bool sampled = !rows.empty() && rows.front().contains("samples");
  std::vector<std::string> columns, last;
  for (const Column& c : result_columns()) {
    const std::string key(c.key);
    switch (c.shown) {
      case Shown::Always: columns.push_back(key); break;
      case Shown::Study:
        if (rows_of == RowsOf::Study) columns.push_back(key);
        break;
      case Shown::Sampled:
        if (sampled) columns.push_back(key);
        break;
      case Shown::Split:
        if (std::any_of(rows.begin(), rows.end(), [&](const JsonRow& row) {
              return row.at(key) != 1;
            })) {
          last.push_back(key);
        }
        break;
      case Shown::JsonOnly:
      case Shown::TableOnly: break;
    }
  }
  columns.insert(columns.end(), last.begin(), last.end());
  return columns;
}

// A column of a table as laid out: its header, width, alignment and how its cells read.
struct TableColumn {
  const Column* column;
  std::string header;
  size_t width;
  bool left;
  bool as_written;
};

// A value as JSON holds it, a number as {:g}: a study's axes.
std::string as_written(const nlohmann::ordered_json& value) {
  return value.is_string() ? value.get<std::string>() : fmt::format("{:g}", value.get<double>());
}

TableColumn laid_out(const ViewColumn& v, const std::vector<OutputRow>& rows) {
  const Column& c = result_column(v.key);
  if (v.as_written) {
    TableColumn t{&c, std::string(v.key), v.key.size(), false, true};
    bool numbers = true;
    for (const OutputRow& row : rows) {
      const auto value = c.read(row);
      t.width = std::max(t.width, as_written(value).size());
      numbers = numbers && value.is_number();
    }
    t.left = !numbers;
    return t;
  }
  const std::string_view header = v.header.empty() ? c.table.header : v.header;
  if (header.empty()) {
    throw std::logic_error("result schema: no table shows column '" + std::string(v.key) + "'");
  }
  return {&c, std::string(header), static_cast<size_t>(v.width > 0 ? v.width : c.table.width),
          c.table.left, false};
}

std::string aligned(const TableColumn& t, const std::string& text) {
  return t.left ? fmt::format("{:<{}}", text, t.width) : fmt::format("{:>{}}", text, t.width);
}

std::string cell(const TableColumn& t, const OutputRow& row) {
  const auto value = t.column->read(row);
  if (t.as_written) return aligned(t, as_written(value));
  const TableFormat& f = t.column->table;
  if (value.is_string()) return aligned(t, value.get<std::string>());
  if (value.is_boolean()) return aligned(t, value.get<bool>() ? "yes" : "NO");
  if (!value.is_number_float()) return aligned(t, value.dump());
  if (f.dash_on_one_gpu && row.result->gpus == 1) return aligned(t, "-");
  return aligned(t, fmt::format("{:.{}f}", value.get<double>() * f.scale, f.decimals));
}

}  // namespace

JsonRow row_json(const OutputRow& row) {
  JsonRow fields = JsonRow::object();
  for (const Column& c : result_columns()) {
    if (in_json(c, row)) fields[std::string(c.key)] = c.read(row);
  }
  return fields;
}

std::string rows_csv(const std::vector<JsonRow>& rows, RowsOf rows_of) {
  const std::vector<std::string> columns = csv_columns(rows, rows_of);
  std::string out = csv_record(columns);
  for (const JsonRow& row : rows) {
    std::vector<std::string> cells;
    for (const std::string& c : columns) {
      const auto& v = row.at(c);
      cells.push_back(v.is_string()         ? v.get<std::string>()
                      : v.is_number_float() ? fmt::format("{:.9g}", v.get<double>())
                                            : v.dump());
    }
    out += csv_record(cells);
  }
  return out;
}

std::string rows_table(const std::vector<OutputRow>& rows, const std::vector<ViewColumn>& view,
                       bool blank_line_between_methods) {
  std::vector<TableColumn> columns;
  for (const ViewColumn& v : view) columns.push_back(laid_out(v, rows));
  const auto line = [&](const auto& text_of) {
    std::string text;
    for (size_t i = 0; i < columns.size(); ++i) text += (i > 0 ? " " : "") + text_of(columns[i]);
    return text + "\n";
  };
  std::string out = line([&](const TableColumn& t) { return aligned(t, t.header); });
  std::string previous;
  for (const OutputRow& row : rows) {
    const ResultRow& r = *row.result;
    const std::string method = r.topology + r.workload + r.comm;
    if (blank_line_between_methods && !previous.empty() && method != previous) out += "\n";
    previous = method;
    out += line([&](const TableColumn& t) { return cell(t, row); });
  }
  return out;
}

std::vector<OutputRow> output_rows(const std::vector<ResultRow>& rows,
                                   const Experiment& experiment) {
  std::map<std::string, RunSettings> settings;  // by workload: its framework's
  for (const std::string& workload : experiment.workloads)
    settings.emplace(workload, run_settings_of(for_workload(experiment, workload)));
  std::vector<OutputRow> out;
  for (const ResultRow& r : rows) out.push_back({&r, settings.at(r.workload), std::nullopt});
  return out;
}

nlohmann::ordered_json results_json(const std::vector<OutputRow>& rows,
                                    const Experiment& experiment) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  if (experiment.samples > 0) doc["seed"] = experiment.seed;
  doc["results"] = nlohmann::ordered_json::array();
  for (const OutputRow& row : rows) doc["results"].push_back(row_json(row));
  return doc;
}

}  // namespace gpuscale::sim
