#include "workloads/src/framework.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "topologies/core/config_reader.hpp"
#include "topologies/core/derived_document.hpp"

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

// A framework's input pipeline (`input:`), or its DALI pipeline (`dali_input:`, on the GPU, whose
// decode threads need their nvJPEG buffer).
InputPipeline read_input_pipeline(const ConfigNode& node, const std::string& key, bool on_gpu) {
  MapReader in(node, key, on_gpu ? std::vector<std::string>{"decode_threads", "prefetch_batches",
                                                             "decoder_buffer"}
                                 : std::vector<std::string>{"decode_threads", "prefetch_batches"});
  InputPipeline p;
  p.on_gpu = on_gpu;
  p.decode_threads =
      static_cast<int>(read_integer(in.require("decode_threads", "4"), "decode_threads", 1, 1024));
  p.prefetch_batches = static_cast<int>(
      read_integer(in.require("prefetch_batches", "4"), "prefetch_batches", 1, 1024));
  if (on_gpu) p.decoder_buffer = read_bytes(in.require("decoder_buffer", "16 MiB"), "decoder_buffer");
  return p;
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

// The exchange methods a framework lists, each a name once, with its line.
std::vector<std::pair<std::string, Origin>> read_exchange_methods(const ConfigNode& node) {
  if (!node.is_sequence() || node.items().empty()) {
    throw ConfigError(node.origin(), "exchange_methods must list the framework's gradient-exchange "
                                     "methods, e.g. [kvstore_device, kvstore_nccl, allreduce]");
  }
  std::vector<std::pair<std::string, Origin>> methods;
  for (const ConfigNode& item : node.items()) {
    const std::string name = read_name(item, "exchange method", NameUse::file);
    for (const auto& [listed, where] : methods) {
      if (listed == name) {
        throw ConfigError(item.origin(), fmt::format("exchange method '{}' listed twice (first "
                                                     "at line {})", name, where.line));
      }
    }
    methods.emplace_back(name, item.origin());
  }
  return methods;
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

bool FrameworkConfig::has_exchange_method(const std::string& method) const {
  return std::any_of(exchange_methods.begin(), exchange_methods.end(),
                     [&](const auto& listed) { return listed.first == method; });
}

const PrecisionRecipe& FrameworkConfig::precision_of(const Workload& workload) const {
  return find_precision_recipe(precision_recipes, workload.recipe, name, workload.recipe_origin);
}

const ShippedFolder& shipped_frameworks() {
  static const ShippedFolder folder("framework", "GPUSCALE_FRAMEWORKS_DIR",
                                    "workloads/frameworks");
  return folder;
}

FrameworkConfig load_framework(const std::string& name_or_path, const Origin& named_at) {
  FrameworkConfig f;
  f.file = shipped_frameworks().resolve(name_or_path, "", named_at);
  // A framework derived from another (`base: pytorch-ddp`) runs as its base but where it says
  // otherwise; its `precision:` section replaces the base's whole, since a recipe it does not
  // list is one it does not have.
  const ConfigNode doc = load_derived_document(
      f.file, shipped_frameworks(), "name:, execution:, host_costs: ...",
      [](ConfigNode& base, const ConfigNode& derived) {
        if (derived.find("precision") != nullptr) base.erase("precision");
      });
  if (const ConfigNode* old = doc.is_map() ? doc.find("exchange") : nullptr) {
    throw ConfigError(old->origin(), "'exchange' (--comm names mapped to methods) is now "
                                     "'exchange_methods', the list of the framework's methods, "
                                     "e.g. [kvstore_device, kvstore_nccl, allreduce]; --comm p2p "
                                     "and nccl_reduce_bcast find the kvstore methods themselves");
  }
  MapReader r(doc, "framework file",
              {"name", "description", "context", "workspace_limit", "optimizer_state_per_param",
               "update_on_kvstore", "relu_in_place", "add_in_place", "execution", "host_costs",
               "input", "dali_input",
               "exchange_methods", "copies_without_peer_access", "allreduce", "precision",
               "calibration"});
  f.name = r.name("name", "mxnet");
  f.description = r.optional_string("description").value_or("");
  f.context = read_parameter<Bytes>(r, "context", "400 MB", read_bytes, format_bytes);
  f.workspace_limit = read_bytes(r.require("workspace_limit", "1024 MiB"), "workspace_limit");
  f.optimizer_state_per_param = static_cast<int>(
      read_integer(r.require("optimizer_state_per_param", "1"), "optimizer_state_per_param", 0, 8));
  f.update_on_kvstore = read_bool(r.require("update_on_kvstore", "true"), "update_on_kvstore");
  f.relu_in_place = read_bool(r.require("relu_in_place", "false"), "relu_in_place");
  if (const ConfigNode* n = r.find("add_in_place")) f.add_in_place = read_bool(*n, "add_in_place");

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

  f.input = read_input_pipeline(r.require("input", "{decode_threads: 4, prefetch_batches: 4}"),
                                "input", false);
  if (const ConfigNode* n = r.find("dali_input")) {
    f.dali_input = read_input_pipeline(*n, "dali_input", true);
  }

  f.exchange_methods = read_exchange_methods(
      r.require("exchange_methods", "[kvstore_device, kvstore_nccl, allreduce]"));
  if (const ConfigNode* n = r.find("copies_without_peer_access")) {
    f.copies_without_peer_access = *topo::routing_mode_from_string(
        read_one_of(*n, "copies_without_peer_access", topo::routing_mode_names()));
  }
  f.allreduce = read_allreduce(r.require("allreduce", "{grouping: fusion_cycle, buffer: 64 MiB, cycle: 5 ms}"));
  f.precision_recipes = read_precision_recipes(r.find("precision"));
  if (const ConfigNode* c = r.find("calibration")) f.calibration = read_calibration(*c);
  return f;
}

}  // namespace gpuscale::wl
