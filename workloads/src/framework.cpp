#include "workloads/src/framework.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/collectives/registry.hpp"
#include "topologies/core/config_reader.hpp"

namespace gpuscale::wl {
namespace {

// `NAME: VALUE` (sourced) or `NAME: {value: V, fitted: true, range: [LOW, HIGH]}`; `read` reads
// one quantity of the parameter's unit, `format` prints one.
template <typename Q, typename Read, typename Format>
ModelParameter<Q> read_parameter(const MapReader& map, const std::string& name,
                                 std::string_view example, Read read, Format format) {
  ModelParameter<Q> c;
  c.name = name;
  const ConfigNode& node = map.require(name, example);
  c.origin = node.origin();
  if (!node.is_map()) {
    c.value = read(node, name);
    return c;
  }
  MapReader r(node, name, {"value", "fitted", "range"});
  c.value = read(r.require("value", example), name);
  c.fitted = read_bool(r.require("fitted", "true"), name + " fitted");
  const ConfigNode& range = r.require("range", "[LOW, HIGH]");
  if (!range.is_sequence() || range.items().size() != 2) {
    throw ConfigError(range.origin(), fmt::format("range of {} must be [low, high]", name));
  }
  c.low = read(range.items()[0], name + " range low");
  c.high = read(range.items()[1], name + " range high");
  if (c.low.value > c.high.value) {
    throw ConfigError(range.origin(), fmt::format("range of {} has low > high", name));
  }
  if (c.value.value < c.low.value || c.value.value > c.high.value) {
    throw ConfigError(node.origin(),
                      fmt::format("{} = {} lies outside its range [{}, {}]: a fitted value outside "
                                  "its sourced range means a missing mechanism, not a wider range",
                                  name, format(c.value), format(c.low), format(c.high)));
  }
  return c;
}

HostCost read_host_cost(const MapReader& costs, const std::string& name, std::string_view example) {
  return read_parameter<Seconds>(costs, name, example, read_seconds, format_seconds);
}

// `allreduce: {grouping: fusion_cycle, buffer: B, cycle: T}` or `{grouping: buckets, buffer: B,
// first_bucket: B}`.
AllreduceModel read_allreduce(const ConfigNode& node) {
  MapReader r(node, "allreduce", {"grouping", "buffer", "cycle", "first_bucket"});
  AllreduceModel a;
  const bool buckets =
      read_one_of(r.require("grouping", "fusion_cycle"), "grouping", {"fusion_cycle", "buckets"}) == "buckets";
  a.grouping = buckets ? AllreduceGrouping::Buckets : AllreduceGrouping::FusionCycle;
  a.buffer = read_bytes(r.require("buffer", "64 MiB"), "allreduce buffer");
  const char* other = buckets ? "cycle" : "first_bucket";
  if (const ConfigNode* n = r.find(other)) {
    throw ConfigError(n->origin(), fmt::format("allreduce {} belongs to grouping {}, not {}", other,
                                               buckets ? "fusion_cycle" : "buckets",
                                               buckets ? "buckets" : "fusion_cycle"));
  }
  if (buckets) {
    a.first_bucket = read_bytes(r.require("first_bucket", "1 MiB"), "allreduce first_bucket");
  } else {
    const ConfigNode& cycle = r.require("cycle", "5 ms");
    a.cycle = read_seconds(cycle, "allreduce cycle");
    if (a.cycle.value < 0) {
      throw ConfigError(cycle.origin(), "allreduce cycle must be 0 (no sleep between Horovod's "
                                        "cycles) or positive");
    }
  }
  return a;
}

template <typename Q>
ParameterView view_of(const ModelParameter<Q>& p, ParameterUnit unit) {
  return {p.name, unit, p.value.value, p.low.value, p.high.value, p.fitted, p.origin};
}

// `calibration: {set: TEXT, points: {SUITE: [ID, ...]}, fit: {date: D, residuals_pct: {SUITE:
// {ID: E}}}}`
std::vector<std::pair<SuitePoint, const ConfigNode*>> read_suite_points(const ConfigNode& node,
                                                                        const std::string& what) {
  if (!node.is_map() || node.entries().empty()) {
    throw ConfigError(node.origin(), what + " must map suite names to lists of point ids");
  }
  std::vector<std::pair<SuitePoint, const ConfigNode*>> points;
  for (const ConfigNode::Entry& e : node.entries()) {
    if (e.value.is_map()) {
      for (const ConfigNode::Entry& p : e.value.entries())
        points.push_back({{e.key, p.key}, &p.value});
    } else if (e.value.is_sequence()) {
      for (const ConfigNode& p : e.value.items())
        points.push_back({{e.key, read_string(p, what)}, &p});
    } else {
      throw ConfigError(e.value.origin(), what + " of suite " + e.key + " must be a list");
    }
  }
  return points;
}

Calibration read_calibration(const ConfigNode& node) {
  MapReader r(node, "calibration", {"set", "points", "fit"});
  Calibration c;
  c.set = r.string("set", "\"one-V100 MXNet throughput (fs §4)\"");
  for (const auto& [point, value] : read_suite_points(
           r.require("points", "{mxnet-v100: [throughput/ResNet-50/MXNet/1gpu/b1]}"),
           "calibration points"))
    c.points.push_back(point);
  if (const ConfigNode* fit = r.find("fit")) {
    MapReader fr(*fit, "calibration fit", {"date", "residuals_pct"});
    c.fitted_on = fr.string("date", "2026-11-24");
    for (const auto& [point, value] : read_suite_points(
             fr.require("residuals_pct", "{SUITE: {POINT: -1.2}}"), "residuals_pct")) {
      c.residuals_pct.emplace_back(point, read_number(*value, "residual of " + point.id, -1e6, 1e6));
    }
  }
  return c;
}

ExchangeLayout read_layout(const ConfigNode& node, const std::string& what) {
  const std::string v = read_one_of(node, what, {"kvstore_device", "kvstore_nccl", "allreduce"});
  if (v == "kvstore_device") return ExchangeLayout::KvstoreDevice;
  if (v == "kvstore_nccl") return ExchangeLayout::KvstoreNccl;
  return ExchangeLayout::Allreduce;
}

}  // namespace

std::vector<const HostCost*> HostCosts::all() const {
  return {&kernel_launch, &stream_sync, &python_per_gpu, &metric_sync, &engine_op, &python_per_key};
}

std::vector<HostCost*> HostCosts::all() {
  return {&kernel_launch, &stream_sync, &python_per_gpu, &metric_sync, &engine_op, &python_per_key};
}

bool Calibration::has_point(const std::string& suite_name, const std::string& point_id) const {
  return std::find(points.begin(), points.end(), SuitePoint{suite_name, point_id}) != points.end();
}

std::string format_parameter(ParameterUnit unit, double value) {
  return unit == ParameterUnit::Seconds ? fmt::format("{:.4g} us", value * 1e6)
                                        : fmt::format("{:.4g} MB", value / 1e6);
}

std::vector<ParameterView> FrameworkConfig::parameters() const {
  std::vector<ParameterView> views = {view_of(context, ParameterUnit::Bytes)};
  for (const HostCost* c : host.all()) views.push_back(view_of(*c, ParameterUnit::Seconds));
  return views;
}

void FrameworkConfig::set_parameter(const std::string& parameter, double value) {
  if (parameter == context.name) {
    context.value.value = value;
    return;
  }
  for (HostCost* c : host.all()) {
    if (c->name == parameter) {
      c->value.value = value;
      return;
    }
  }
  throw std::logic_error("framework: no parameter " + name);
}

ExchangeLayout FrameworkConfig::exchange_layout(const std::string& comm) const {
  for (const auto& [method, layout] : exchange) {
    if (method == comm) return layout;
  }
  return ExchangeLayout::Allreduce;
}

std::optional<topo::RoutingMode> FrameworkConfig::copy_routing(const std::string& comm) const {
  if (exchange_layout(comm) != ExchangeLayout::KvstoreDevice) return std::nullopt;
  return copies_without_peer_access;
}

std::string FrameworkConfig::describe_exchange(const std::string& comm,
                                               const AllreduceModel& grouping) const {
  std::string how;
  switch (exchange_layout(comm)) {
    case ExchangeLayout::KvstoreDevice: how = "kvstore=device per key"; break;
    case ExchangeLayout::KvstoreNccl: how = "kvstore=nccl per key"; break;
    case ExchangeLayout::Allreduce: {
      const std::string buffer = fmt::format("{:.4g} MiB", grouping.buffer.value / (1 << 20));
      if (grouping.buffer.value <= 0) {
        how = "one allreduce per tensor";
      } else if (grouping.grouping == AllreduceGrouping::Buckets) {
        how = fmt::format("ddp buckets of {}", buffer);
      } else if (grouping.cycle.value > 0) {
        how = fmt::format("horovod fusion {} every {:g} ms", buffer, grouping.cycle.value * 1e3);
      } else {
        how = fmt::format("horovod fusion {} with no cycle", buffer);
      }
    }
  }
  return name + ": " + how;
}

bool FrameworkConfig::process_per_gpu(const std::string& comm) const {
  return execution.process_per_gpu || exchange_layout(comm) == ExchangeLayout::Allreduce;
}

const ShippedFolder& shipped_frameworks() {
  static const ShippedFolder folder("framework", "GPUSCALE_FRAMEWORKS_DIR",
                                    "workloads/frameworks");
  return folder;
}

FrameworkConfig load_framework(const std::string& name_or_path, const Origin& named_at) {
  FrameworkConfig f;
  f.file = shipped_frameworks().resolve(name_or_path, "", named_at);
  const ConfigNode doc = ConfigNode::load_file(f.file);
  MapReader r(doc, "framework file",
              {"name", "description", "context", "workspace_limit", "optimizer_state_per_param",
               "update_on_kvstore", "relu_in_place", "execution", "host_costs", "input", "exchange",
               "copies_without_peer_access", "allreduce", "calibration"});
  f.name = r.name("name", "mxnet");
  f.description = r.optional_string("description").value_or("");
  f.context = read_parameter<Bytes>(r, "context", "400 MB", read_bytes, format_bytes);
  f.workspace_limit = read_bytes(r.require("workspace_limit", "1024 MiB"), "workspace_limit");
  f.optimizer_state_per_param = static_cast<int>(
      read_integer(r.require("optimizer_state_per_param", "1"), "optimizer_state_per_param", 0, 8));
  f.update_on_kvstore = read_bool(r.require("update_on_kvstore", "true"), "update_on_kvstore");
  f.relu_in_place = read_bool(r.require("relu_in_place", "false"), "relu_in_place");

  MapReader e(r.require("execution", "{processes: one_per_node}"), "execution",
              {"processes", "gpu_compute_workers", "gpu_copy_workers", "bulk_segment_ops",
               "cudnn_autotune", "sync_after_op", "training_loop", "updates"});
  f.execution.process_per_gpu =
      read_one_of(e.require("processes", "one_per_node"), "processes",
                  {"one_per_node", "one_per_gpu"}) == "one_per_gpu";
  f.execution.gpu_compute_workers = static_cast<int>(
      read_integer(e.require("gpu_compute_workers", "2"), "gpu_compute_workers", 1, 64));
  f.execution.gpu_copy_workers = static_cast<int>(
      read_integer(e.require("gpu_copy_workers", "2"), "gpu_copy_workers", 1, 64));
  f.execution.bulk_segment_ops = static_cast<int>(
      read_integer(e.require("bulk_segment_ops", "15"), "bulk_segment_ops", 1, 100000));
  f.execution.cudnn_autotune = read_bool(e.require("cudnn_autotune", "true"), "cudnn_autotune");
  f.execution.sync_after_op = read_bool(e.require("sync_after_op", "true"), "sync_after_op");
  f.execution.training_loop =
      read_one_of(e.require("training_loop", "mxnet_module_fit"), "training_loop",
                  {"mxnet_module_fit", "pytorch_main"}) == "pytorch_main"
          ? TrainingLoop::PytorchMain
          : TrainingLoop::MxnetModuleFit;
  const std::string updates =
      read_one_of(e.require("updates", "per_key"), "updates",
                  {"per_key", "after_every_exchange_on_host", "after_every_exchange_on_stream"});
  f.execution.updates = updates == "per_key" ? UpdateTiming::PerKey
                        : updates == "after_every_exchange_on_host"
                            ? UpdateTiming::AfterEveryExchangeOnHost
                            : UpdateTiming::AfterEveryExchangeOnStream;

  MapReader h(r.require("host_costs", "{kernel_launch: 5 us, ...}"), "host_costs",
              {"kernel_launch", "stream_sync", "python_per_gpu", "metric_sync", "engine_op",
               "python_per_key"});
  f.host.kernel_launch = read_host_cost(h, "kernel_launch", "4.83 us");
  f.host.stream_sync = read_host_cost(h, "stream_sync", "5.8 us");
  f.host.python_per_gpu = read_host_cost(h, "python_per_gpu", "50 us");
  f.host.metric_sync = read_host_cost(h, "metric_sync", "20 us");
  f.host.engine_op = read_host_cost(h, "engine_op", "20 us");
  f.host.python_per_key = read_host_cost(h, "python_per_key", "100 us");

  MapReader in(r.require("input", "{decode_threads: 4, prefetch_batches: 4}"), "input",
               {"decode_threads", "prefetch_batches"});
  f.input.decode_threads =
      static_cast<int>(read_integer(in.require("decode_threads", "4"), "decode_threads", 1, 1024));
  f.input.prefetch_batches = static_cast<int>(
      read_integer(in.require("prefetch_batches", "4"), "prefetch_batches", 1, 1024));

  if (const ConfigNode* ex = r.find("exchange")) {
    if (!ex->is_map()) throw ConfigError(ex->origin(), "exchange must map comm methods to layouts");
    const std::vector<std::string> methods = coll::comm_method_names();
    for (const ConfigNode::Entry& entry : ex->entries()) {
      if (std::find(methods.begin(), methods.end(), entry.key) == methods.end()) {
        // Else the misspelt method would silently run as an allreduce.
        throw ConfigError(entry.where(), fmt::format("unknown comm method '{}' in exchange ({})",
                                                     entry.key, name_hint(entry.key, methods)));
      }
      f.exchange.emplace_back(entry.key, read_layout(entry.value, "exchange of " + entry.key));
    }
  }
  if (const ConfigNode* n = r.find("copies_without_peer_access")) {
    f.copies_without_peer_access = *topo::routing_mode_from_string(
        read_one_of(*n, "copies_without_peer_access", topo::routing_mode_names()));
  }
  f.allreduce = read_allreduce(r.require("allreduce", "{grouping: fusion_cycle, buffer: 64 MiB, cycle: 5 ms}"));
  if (const ConfigNode* c = r.find("calibration")) f.calibration = read_calibration(*c);
  return f;
}

std::vector<std::vector<int>> allreduce_groups(const AllreduceModel& model,
                                               const std::vector<double>& bytes) {
  std::vector<std::vector<int>> groups;
  double held = 0;
  bool open = false;  // the last group takes more tensors
  for (size_t t = 0; t < bytes.size(); ++t) {
    const auto tensor = static_cast<int>(t);
    if (model.buffer.value <= 0) {
      groups.push_back({tensor});
      continue;
    }
    if (model.grouping == AllreduceGrouping::Buckets) {
      if (!open) {
        groups.emplace_back();
        held = 0;
      }
      groups.back().push_back(tensor);
      held += bytes[t];
      open = held < model.bucket_limit_bytes(static_cast<int>(groups.size()) - 1);
      continue;
    }
    if (groups.empty() || !model.joins_fusion_buffer(static_cast<int>(groups.back().size()), held,
                                                     bytes[t])) {
      groups.emplace_back();
      held = 0;
    }
    groups.back().push_back(tensor);
    held += bytes[t];
  }
  return groups;
}

}  // namespace gpuscale::wl
