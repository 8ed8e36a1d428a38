#include "sim/compute/profile.hpp"

#include <fmt/format.h>

#include <charconv>
#include <iterator>
#include <stdexcept>

#include "sim/core/config_reader.hpp"

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

PassTimes read_pass_times(const ConfigNode& node, const std::string& what) {
  MapReader r(node, what, training_pass_names());
  PassTimes t;
  t.forward = read_seconds(r.require("forward", "1.2 ms"), fmt::format("forward of {}", what));
  t.backward_data = read_seconds(r.require("backward_data", "1.1 ms"),
                                 fmt::format("backward_data of {}", what));
  t.backward_weights = read_seconds(r.require("backward_weights", "1.3 ms"),
                                    fmt::format("backward_weights of {}", what));
  return t;
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
    layer.by_batch[batch] = read_pass_times(
        batch_entry.value, fmt::format("layer {} at batch {}", layer.name, batch));
  }
  return layer;
}

double interpolate(const std::map<long, PassTimes>& by_batch, TrainingPass pass, long batch) {
  const auto above = by_batch.lower_bound(batch);
  if (above != by_batch.end() && above->first == batch) return above->second.of(pass).value;
  if (above == by_batch.begin()) return above->second.of(pass).value;
  const auto below = std::prev(above);
  const double t0 = below->second.of(pass).value;
  if (above == by_batch.end()) {
    return t0 * static_cast<double>(batch) / static_cast<double>(below->first);
  }
  const double t1 = above->second.of(pass).value;
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
  return {interpolate(l->by_batch, pass, batch)};
}

MeasuredProfile load_profile(const std::string& path) {
  const ConfigNode doc = ConfigNode::load_file(path);
  MapReader r(doc, "measured profile",
              {"gpu", "driver", "cuda", "cudnn", "framework", "precision", "workload", "source",
               "layers"});
  MeasuredProfile p;
  p.origin = Origin{path, 0};
  p.gpu = r.string("gpu", "V100-SXM2");
  p.driver = r.string("driver", "\"418.67\"");
  p.cuda = r.string("cuda", "\"10.1\"");
  p.cudnn = r.string("cudnn", "\"7.6.2\"");
  p.framework = r.string("framework", "MXNet 1.2.0 (NGC 18.04)");
  const ConfigNode& precision = r.require("precision", "fp32");
  const auto parsed = precision_from_string(read_string(precision, "precision"));
  if (!parsed) {
    throw ConfigError(precision.origin(),
                      unknown_name_message("precision", precision.value(), precision_names()));
  }
  p.precision = *parsed;
  p.workload = r.string("workload", "resnet50");
  p.source = r.optional_string("source").value_or("");

  const ConfigNode& layers = r.require("layers", "{conv1: {32: {forward: 1.2 ms, ...}}}");
  if (!layers.is_map() || layers.entries().empty()) {
    throw ConfigError(layers.origin(), "'layers' must map layer names to their times per batch "
                                       "size (e.g. conv1: {32: {forward: 1.2 ms, ...}})");
  }
  for (const auto& entry : layers.entries()) p.layers.push_back(read_layer(entry));
  return p;
}

}  // namespace gpuscale::compute
