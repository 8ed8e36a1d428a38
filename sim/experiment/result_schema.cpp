#include "sim/experiment/result_schema.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpuscale::sim {
namespace {

using Value = nlohmann::ordered_json;

const ResultRow& r(const OutputRow& row) { return *row.result; }
const IterationSpread& spread(const OutputRow& row) { return row.result->spread; }
const StudyPlace& place(const OutputRow& row) { return *row.study; }

// The busiest link direction of any kind: the one figure of link use a CSV cell holds.
double max_link_utilisation(const ResultRow& result) {
  double max_use = 0;
  for (const auto& [kind, use] : result.link_utilisation) max_use = std::max(max_use, use.max);
  return max_use;
}

Value link_utilisation(const ResultRow& result) {
  Value links = Value::object();
  for (const auto& [kind, use] : result.link_utilisation) {
    links[kind] = {{"max", use.max}, {"mean", use.mean}};
  }
  return links;
}

constexpr double kMs = 1e3;  // seconds shown as milliseconds
constexpr double kPercent = 100;
constexpr Shown kAlways = Shown::Always, kStudy = Shown::Study, kSampled = Shown::Sampled;

}  // namespace

RunSettings run_settings_of(const Experiment& e) {
  return {e.routing.empty() ? "default" : e.routing, allreduce_buffer_mb(e), e.protocol,
          decode_threads_of(e), e.input_pipeline.empty() ? "cpu" : e.input_pipeline};
}

const std::vector<Column>& result_columns() {
  static const std::vector<Column> columns = {
      {"index", kStudy, [](const OutputRow& o) { return Value(place(o).index); }},
      {"hash", kStudy, [](const OutputRow& o) { return Value(place(o).hash); }},
      {"machine", kStudy, [](const OutputRow& o) { return Value(place(o).machine); }},
      {"topology", kAlways, [](const OutputRow& o) { return Value(r(o).topology); }},
      {"workload", kAlways, [](const OutputRow& o) { return Value(r(o).workload); },
       {.header = "workload", .width = 13, .left = true}},
      {"comm", kAlways, [](const OutputRow& o) { return Value(r(o).comm); },
       {.header = "comm", .width = 18, .left = true}},
      {"exchange", kAlways, [](const OutputRow& o) { return Value(r(o).exchange); }},
      {"framework", kAlways, [](const OutputRow& o) { return Value(r(o).framework); },
       {.header = "framework", .width = 15, .left = true}},
      {"precision", kAlways, [](const OutputRow& o) { return Value(r(o).precision); },
       {.header = "precision", .width = 9, .left = true}},
      {"routing", kAlways, [](const OutputRow& o) { return Value(o.settings.routing); }},
      {"fusion_mb", kAlways, [](const OutputRow& o) { return Value(o.settings.fusion_mb); }},
      {"protocol", kAlways, [](const OutputRow& o) { return Value(o.settings.protocol); }},
      {"decode_threads", kAlways,
       [](const OutputRow& o) { return Value(o.settings.decode_threads); }},
      {"input_pipeline", kAlways,
       [](const OutputRow& o) { return Value(o.settings.input_pipeline); }},
      {"scaling", kAlways, [](const OutputRow& o) { return Value(r(o).scaling); }},
      {"gpus", kAlways, [](const OutputRow& o) { return Value(r(o).gpus); },
       {.header = "gpus", .width = 4}},
      {"batch", kAlways, [](const OutputRow& o) { return Value(r(o).batch); },
       {.header = "batch", .width = 5}},
      {"accumulate", kAlways, [](const OutputRow& o) { return Value(r(o).accumulate); },
       {.header = "accum", .width = 5}},
      {"iteration_s", kAlways, [](const OutputRow& o) { return Value(r(o).iteration_s); },
       {.header = "iter ms", .width = 10, .scale = kMs}},
      {"epoch_s", kAlways, [](const OutputRow& o) { return Value(r(o).epoch_s); },
       {.header = "epoch s", .width = 10, .decimals = 1}},
      {"setup_s", kAlways, [](const OutputRow& o) { return Value(r(o).setup_s); }},
      {"speedup", kAlways, [](const OutputRow& o) { return Value(r(o).speedup); },
       {.header = "speedup", .width = 7}},
      {"efficiency", kAlways, [](const OutputRow& o) { return Value(r(o).speedup / r(o).gpus); },
       {.header = "eff %", .width = 6, .scale = kPercent, .decimals = 0}},
      // Samples per second over all GPUs, in the unit of the workload's dataset; the old key
      // `throughput_img_s` (the same number, whatever the unit) stays one release for readers
      // of earlier CSV and JSON.
      {"throughput", kAlways, [](const OutputRow& o) { return Value(r(o).throughput_img_s); },
       {.header = "per s", .width = 9, .decimals = 0}},
      {"unit", kAlways, [](const OutputRow& o) { return Value(r(o).unit); },
       {.header = "unit", .width = 15, .left = true}},
      {"throughput_img_s", kAlways,
       [](const OutputRow& o) { return Value(r(o).throughput_img_s); }},
      {"fpbp_s", kAlways, [](const OutputRow& o) { return Value(r(o).fpbp_s); },
       {.header = "FP+BP ms", .width = 9, .scale = kMs}},
      {"wu_s", kAlways, [](const OutputRow& o) { return Value(r(o).wu_s); },
       {.header = "WU ms", .width = 9, .scale = kMs}},
      {"input_wait_s", kAlways, [](const OutputRow& o) { return Value(r(o).input_wait_s); },
       {.header = "input ms", .width = 9, .scale = kMs}},
      {"rest_s", kAlways, [](const OutputRow& o) { return Value(r(o).rest_s); },
       {.header = "rest ms", .width = 9, .scale = kMs}},
      {"overlap_s", kAlways, [](const OutputRow& o) { return Value(r(o).overlap_s); }},
      {"exposed_comm_s", kAlways, [](const OutputRow& o) { return Value(r(o).exposed_comm_s); }},
      {"memory_gpu0_gb", kAlways, [](const OutputRow& o) { return Value(r(o).memory_gpu0_gb); },
       {.header = "GPU0 GB", .width = 8}},
      {"memory_max_other_gb", kAlways,
       [](const OutputRow& o) { return Value(r(o).memory_max_other_gb); },
       {.header = "other GB", .width = 8, .dash_on_one_gpu = true}},
      {"gpu_memory_gb", kAlways, [](const OutputRow& o) { return Value(r(o).gpu_memory_gb); }},
      {"fits_memory", kAlways, [](const OutputRow& o) { return Value(r(o).fits_memory()); },
       {.header = "fits", .width = 4}},
      {"max_link_utilisation", kAlways,
       [](const OutputRow& o) { return Value(max_link_utilisation(r(o))); }},
      {"link_utilisation", Shown::JsonOnly,
       [](const OutputRow& o) { return link_utilisation(r(o)); }},
      // The sizes of each steady iteration's gradient allreduces (fused buffers, buckets or
      // tensors), in the order they start.
      {"allreduce_mb", Shown::JsonOnly,
       [](const OutputRow& o) {
         Value iterations = Value::array();
         for (const std::vector<double>& iteration : r(o).allreduce_bytes) {
           Value sizes = Value::array();
           for (double bytes : iteration) sizes.push_back(bytes / 1e6);
           iterations.push_back(std::move(sizes));
         }
         return iterations;
       }},
      {"spatial", Shown::Split, [](const OutputRow& o) { return Value(r(o).spatial_ways); }},
      {"samples", kSampled, [](const OutputRow& o) { return Value(spread(o).samples); }},
      {"iteration_p10_s", kSampled, [](const OutputRow& o) { return Value(spread(o).p10_s); },
       {.header = "p10 ms", .width = 9, .scale = kMs}},
      {"iteration_p50_s", kSampled, [](const OutputRow& o) { return Value(spread(o).p50_s); },
       {.header = "p50 ms", .width = 9, .scale = kMs}},
      {"iteration_p90_s", kSampled, [](const OutputRow& o) { return Value(spread(o).p90_s); },
       {.header = "p90 ms", .width = 9, .scale = kMs}},
      {"speedup_p10", kSampled, [](const OutputRow& o) { return Value(spread(o).speedup_p10); },
       {.header = "spd p10", .width = 8, .decimals = 3}},
      {"speedup_p50", kSampled, [](const OutputRow& o) { return Value(spread(o).speedup_p50); },
       {.header = "spd p50", .width = 8, .decimals = 3}},
      {"speedup_p90", kSampled, [](const OutputRow& o) { return Value(spread(o).speedup_p90); },
       {.header = "spd p90", .width = 8, .decimals = 3}},
      // The median's efficiency in percent, computed as the spread table always has.
      {"efficiency_p50_percent", Shown::TableOnly,
       [](const OutputRow& o) { return Value(kPercent * spread(o).speedup_p50 / r(o).gpus); },
       {.header = "eff p50 %", .width = 9, .decimals = 1}},
  };
  return columns;
}

const Column& result_column(std::string_view key) {
  const auto& columns = result_columns();
  const auto it = std::find_if(columns.begin(), columns.end(),
                               [key](const Column& c) { return c.key == key; });
  if (it == columns.end()) {
    throw std::logic_error("result schema: no column '" + std::string(key) + "'");
  }
  return *it;
}

const std::vector<ViewColumn>& run_table_view() {
  static const std::vector<ViewColumn> view = {
      {"workload"},     {"comm"},    {"gpus"},           {"batch"},
      {"iteration_s"},  {"epoch_s"}, {"speedup"},        {"throughput"}, {"unit"},
      {"fpbp_s"},       {"wu_s"},    {"input_wait_s"},   {"rest_s"},
      {"memory_gpu0_gb"}, {"memory_max_other_gb"},       {"fits_memory"}};
  return view;
}

const std::vector<ViewColumn>& spread_table_view() {
  static const std::vector<ViewColumn> view = {
      {"workload"},        {"comm"},
      {"gpus"},            {"batch"},
      {.key = "iteration_s", .header = "mean ms", .width = 9},
      {"iteration_p10_s"}, {"iteration_p50_s"},
      {"iteration_p90_s"}, {"speedup_p10"},
      {"speedup_p50"},     {"speedup_p90"},
      {"efficiency_p50_percent"}};
  return view;
}

const std::vector<ViewColumn>& sweep_table_measures() {
  static const std::vector<ViewColumn> view = {
      {"iteration_s"}, {"epoch_s"}, {"speedup"},        {"efficiency"},
      {"fpbp_s"},      {"wu_s"},    {"memory_gpu0_gb"}, {"fits_memory"}};
  return view;
}

}  // namespace gpuscale::sim
