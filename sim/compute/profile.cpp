#include "sim/compute/profile.hpp"

#include <fmt/format.h>

#include <charconv>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "topologies/core/config_reader.hpp"
#include "topologies/core/yaml_scalar.hpp"

namespace gpuscale::compute {
namespace {

long read_batch_key(const ConfigNode::Entry& entry, const std::string& layer) {
  long batch = 0;
  const std::string& key = entry.key;
  const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), batch);
  if (ec != std::errc{} || end != key.data() + key.size() || batch < 1) {
    throw ConfigError(entry.where(), fmt::format("layer {}: '{}' is not a batch size (a whole "
                                                 "number >= 1, e.g. '32: {{forward: 1.2 ms, "
                                                 "backward_data: 1.1 ms, backward_weights: 1.3 "
                                                 "ms}}')",
                                                 layer, key));
  }
  return batch;
}

// The three passes' times, under `what`; other keys of the mapping are the caller's to allow.
PassTimes read_pass_times(const MapReader& r, const std::string& what) {
  PassTimes t;
  t.forward = read_seconds(r.require("forward", "1.2 ms"), fmt::format("forward of {}", what));
  t.backward_data = read_seconds(r.require("backward_data", "1.1 ms"),
                                 fmt::format("backward_data of {}", what));
  t.backward_weights = read_seconds(r.require("backward_weights", "1.3 ms"),
                                    fmt::format("backward_weights of {}", what));
  return t;
}

// One layer at one batch: the three medians, then optionally their spread and the algorithms.
BatchMeasurement read_batch(const ConfigNode& node, const std::string& what) {
  std::vector<std::string> keys = training_pass_names();
  keys.insert(keys.end(), {"spread", "algorithm"});
  const MapReader r(node, what, keys);
  BatchMeasurement m;
  m.time = read_pass_times(r, what);
  if (const ConfigNode* spread = r.find("spread")) {
    const std::string spread_what = fmt::format("spread of {}", what);
    m.spread = read_pass_times(MapReader(*spread, spread_what, training_pass_names()), spread_what);
  }
  if (const ConfigNode* algorithm = r.find("algorithm")) {
    const MapReader a(*algorithm, fmt::format("algorithm of {}", what), training_pass_names());
    for (int p = 0; p < kTrainingPassCount; ++p) {
      const std::string pass = to_string(static_cast<TrainingPass>(p));
      m.algorithm[p] = a.string(pass, "IMPLICIT_PRECOMP_GEMM");
    }
  }
  return m;
}

std::vector<long> read_out_of_memory_batches(const ConfigNode& node) {
  if (!node.is_sequence()) {
    throw ConfigError(node.origin(), "out_of_memory_batches must be a list of batch sizes (e.g. "
                                     "'[2048, 4096]', or '[]')");
  }
  std::vector<long> batches;
  for (const ConfigNode& item : node.items()) {
    batches.push_back(read_integer(item, "a batch of out_of_memory_batches", 1,
                                   std::numeric_limits<long>::max()));
  }
  return batches;
}

LayerProfile read_layer(const ConfigNode::Entry& entry) {
  LayerProfile layer;
  layer.name = entry.key;
  layer.origin = entry.where();
  if (!entry.value.is_map() || entry.value.entries().empty()) {
    throw ConfigError(entry.where(), fmt::format("layer {} must map batch sizes to times (e.g. "
                                                 "32: {{forward: 1.2 ms, backward_data: 1.1 ms, "
                                                 "backward_weights: 1.3 ms}})",
                                                 layer.name));
  }
  for (const auto& batch_entry : entry.value.entries()) {
    const long batch = read_batch_key(batch_entry, layer.name);
    if (layer.by_batch.contains(batch)) {
      throw ConfigError(batch_entry.where(), fmt::format("layer {}: batch {} is given twice "
                                                         "(keep one)",
                                                         layer.name, batch));
    }
    layer.by_batch[batch] =
        read_batch(batch_entry.value, fmt::format("layer {} at batch {}", layer.name, batch));
  }
  return layer;
}

// "forward: 310.125 us, backward_data: 0 us, backward_weights: 550.2 us"
std::string pass_values(const PassTimes& t) {
  return fmt::format("forward: {}, backward_data: {}, backward_weights: {}",
                     format_microseconds(t.forward), format_microseconds(t.backward_data),
                     format_microseconds(t.backward_weights));
}

std::string pass_values(const std::array<std::string, kTrainingPassCount>& algorithm) {
  return fmt::format("forward: {}, backward_data: {}, backward_weights: {}",
                     yaml_scalar(algorithm[0]), yaml_scalar(algorithm[1]),
                     yaml_scalar(algorithm[2]));
}

double interpolate(const std::map<long, BatchMeasurement>& by_batch, TrainingPass pass,
                   long batch) {
  const auto above = by_batch.lower_bound(batch);
  if (above != by_batch.end() && above->first == batch) return above->second.time.of(pass).value;
  if (above == by_batch.begin()) return above->second.time.of(pass).value;
  const auto below = std::prev(above);
  const double t0 = below->second.time.of(pass).value;
  if (above == by_batch.end()) {
    return t0 * static_cast<double>(batch) / static_cast<double>(below->first);
  }
  const double t1 = above->second.time.of(pass).value;
  const double f = static_cast<double>(batch - below->first) /
                   static_cast<double>(above->first - below->first);
  return t0 + (t1 - t0) * f;
}

}  // namespace

Seconds PassTimes::of(TrainingPass pass) const {
  switch (pass) {
    case TrainingPass::forward:
      return forward;
    case TrainingPass::backward_data:
      return backward_data;
    case TrainingPass::backward_weights:
      return backward_weights;
  }
  throw std::logic_error("unhandled training pass");
}

const LayerProfile* MeasuredProfile::find(const std::string& layer) const {
  for (const auto& l : layers) {
    if (l.name == layer) return &l;
  }
  return nullptr;
}

Seconds MeasuredProfile::time(const std::string& layer, TrainingPass pass, long batch) const {
  if (batch < 1) throw std::invalid_argument("batch size must be >= 1");
  const LayerProfile* l = find(layer);
  if (l == nullptr) {
    std::vector<std::string> names;
    for (const auto& each : layers) names.push_back(each.name);
    throw ConfigError(origin, fmt::format("profile of {} has no {}", workload,
                                          unknown_name_message("layer", layer, names)));
  }
  return l->time(pass, batch);
}

Seconds LayerProfile::time(TrainingPass pass, long batch) const {
  if (batch < 1) throw std::invalid_argument("batch size must be >= 1");
  return {interpolate(by_batch, pass, batch)};
}

MeasuredProfile load_profile(const std::string& path) {
  const ConfigNode doc = ConfigNode::load_file(path);
  std::vector<std::string> keys = measurement_header_keys();
  keys.insert(keys.end(), {"precision", "workload", "out_of_memory_batches", "layers"});
  const MapReader r(doc, "measured profile", keys);
  MeasuredProfile p;
  p.origin = Origin{path, 0};
  p.header = read_measurement_header(r);
  const ConfigNode& precision = r.require("precision", "fp32");
  const auto parsed = precision_from_string(read_string(precision, "precision"));
  if (!parsed) {
    throw ConfigError(precision.origin(),
                      unknown_name_message("precision", precision.value(), precision_names()));
  }
  p.precision = *parsed;
  p.workload = r.string("workload", "resnet-50");
  p.workload_origin = r.require("workload", "").origin();
  if (const ConfigNode* oom = r.find("out_of_memory_batches")) {
    p.out_of_memory_batches = read_out_of_memory_batches(*oom);
  }

  const ConfigNode& layers = r.require("layers", "{conv1: {32: {forward: 1.2 ms, ...}}}");
  if (!layers.is_map() || layers.entries().empty()) {
    throw ConfigError(layers.origin(), "'layers' must map layer names to their times per batch "
                                       "size (e.g. conv1: {32: {forward: 1.2 ms, ...}})");
  }
  for (const auto& entry : layers.entries()) p.layers.push_back(read_layer(entry));
  for (const auto& entry : doc.entries()) {
    if (entry.key == "layers") p.layers_origin = entry.where();
  }
  return p;
}

std::string profile_to_yaml(const MeasuredProfile& profile) {
  std::string out = measurement_header_to_yaml(profile.header);
  out += fmt::format("precision: {}\nworkload: {}\n", to_string(profile.precision),
                     yaml_scalar(profile.workload));
  if (!profile.out_of_memory_batches.empty()) {
    out += fmt::format("out_of_memory_batches: [{}]\n",
                       fmt::join(profile.out_of_memory_batches, ", "));
  }
  out += "layers:\n";
  for (const LayerProfile& layer : profile.layers) {
    out += fmt::format("  {}:\n", yaml_scalar(layer.name));
    for (const auto& [batch, m] : layer.by_batch) {
      // Continuation lines of a flow mapping must be indented past its key.
      const std::string key = fmt::format("    {}: {{", batch);
      const std::string indent(key.size(), ' ');
      out += key + pass_values(m.time);
      if (m.spread) out += fmt::format(",\n{}spread: {{{}}}", indent, pass_values(*m.spread));
      if (m.algorithm != std::array<std::string, kTrainingPassCount>{}) {
        out += fmt::format(",\n{}algorithm: {{{}}}", indent, pass_values(m.algorithm));
      }
      out += "}\n";
    }
  }
  return out;
}

}  // namespace gpuscale::compute
