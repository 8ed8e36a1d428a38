#include "workloads/src/workload_report.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscale::wl {
namespace {

using nlohmann::ordered_json;

// The GPU other than GPU0 with the largest total: the study's "other GPUs" column.
const MemoryParts* max_other(const std::vector<MemoryParts>& gpus) {
  if (gpus.size() < 2) return nullptr;
  return &*std::max_element(gpus.begin() + 1, gpus.end(), [](const auto& a, const auto& b) {
    return a.total() < b.total();
  });
}

ordered_json parts_json(const MemoryParts& p) {
  return {{"context", p.context},         {"weights", p.weights},
          {"gradients", p.gradients},     {"optimizer", p.optimizer},
          {"activations", p.activations}, {"workspace", p.workspace},
          {"exchange", p.exchange},       {"total", p.total()}};
}

std::string gb(double bytes) { return fmt::format("{:.2f}", bytes / 1e9); }

}  // namespace

nlohmann::ordered_json workload_json(const WorkloadView& v) {
  const Workload& w = v.workload;
  const WorkloadCosts& c = v.costs;
  const int batch = v.memory_options.batch;
  ordered_json j;
  j["name"] = w.name;
  j["description"] = w.description;
  j["source"] = w.source;
  j["file"] = w.file;
  j["dataset"] = {{"name", v.dataset.name}, {"samples", v.dataset.samples}};
  j["precision"] = to_string(w.precision);
  j["input_shape"] = to_string(w.layers[0].output);
  j["params"] = c.params;
  if (w.published_params) j["published_params"] = *w.published_params;
  j["param_tensors"] = c.tensors.size();
  j["fwd_macs_per_sample"] = c.fwd_macs;
  j["fwd_flops_per_sample"] = c.fwd_flops;
  j["bwd_flops_per_sample"] = c.bwd_flops;
  j["batch"] = batch;
  ordered_json layers = ordered_json::array();
  for (size_t i = 1; i < w.layers.size(); ++i) {
    const Layer& layer = w.layers[i];
    const LayerCost& lc = c.layers[i];
    layers.push_back({{"name", layer.name},
                      {"type", to_string(layer.type)},
                      {"output_shape", to_string(layer.output)},
                      {"params", lc.params},
                      {"fwd_flops", lc.fwd_flops},
                      {"bwd_data_flops", lc.bwd_data_flops},
                      {"bwd_weight_flops", lc.bwd_weight_flops},
                      {"fwd_bytes", lc.fwd_bytes(batch)},
                      {"bwd_bytes", lc.has_backward_data || lc.has_backward_weights ? lc.bwd_bytes(batch) : 0.0},
                      {"activation_bytes", lc.activation_bytes * batch}});
  }
  j["layers"] = std::move(layers);

  const auto gpus = estimate_memory(w, c, v.framework, v.memory_options);
  ordered_json memory;
  memory["framework"] = v.framework.name;
  memory["gpus"] = v.memory_options.gpus;
  memory["exchange"] = v.exchange;
  memory["capacity"] = v.gpu_memory_bytes;
  memory["largest_batch"] = largest_batch(w, c, v.framework, v.memory_options, v.gpu_memory_bytes);
  memory["gpu0"] = parts_json(gpus[0]);
  if (const MemoryParts* other = max_other(gpus)) memory["max_other"] = parts_json(*other);
  j["memory_bytes"] = std::move(memory);
  return j;
}

std::string workload_table(const WorkloadView& v) {
  const Workload& w = v.workload;
  const WorkloadCosts& c = v.costs;
  const MemoryOptions& o = v.memory_options;
  std::string out = fmt::format("{}: {}\n", w.name, w.description);
  out += fmt::format("file: {}\nsource: {}\n", w.file, w.source);
  out += fmt::format("input {} ({}), dataset {} ({} samples per epoch)\n",
                     to_string(w.layers[0].output), to_string(w.precision), v.dataset.name,
                     v.dataset.samples);
  out += fmt::format("parameters: {} in {} tensors", c.params, c.tensors.size());
  if (w.published_params) {
    out += fmt::format(" (published {}, {:+.2f}%)", *w.published_params,
                       100.0 * (static_cast<double>(c.params) / *w.published_params - 1));
  }
  out += fmt::format("\nper sample: forward {:.3f} GMAC = {:.3f} GFLOP, backward {:.3f} GFLOP\n\n",
                     c.fwd_macs / 1e9, c.fwd_flops / 1e9, c.bwd_flops / 1e9);

  size_t name_width = 5;
  for (const Layer& layer : w.layers) name_width = std::max(name_width, layer.name.size());
  out += fmt::format("{:<{}} {:<13} {:>14} {:>11} {:>10} {:>10} {:>10} {:>11}\n", "layer", name_width,
                     "type", "output", "params", "fwd MFLOP", "bwd-d", "bwd-w",
                     fmt::format("act MB@{}", o.batch));
  for (size_t i = 1; i < w.layers.size(); ++i) {
    const Layer& layer = w.layers[i];
    const LayerCost& lc = c.layers[i];
    out += fmt::format("{:<{}} {:<13} {:>14} {:>11} {:>10.2f} {:>10.2f} {:>10.2f} {:>11.2f}\n",
                       layer.name, name_width, to_string(layer.type), to_string(layer.output),
                       lc.params, lc.fwd_flops / 1e6, lc.bwd_data_flops / 1e6,
                       lc.bwd_weight_flops / 1e6, lc.activation_bytes * o.batch / 1e6);
  }

  const auto gpus = estimate_memory(w, c, v.framework, o);
  out += fmt::format("\nmemory per GPU (GB), batch {} per GPU on {} GPU{}, {} exchange, {}:\n",
                     o.batch, o.gpus, o.gpus > 1 ? "s" : "", v.exchange, v.framework.name);
  out += fmt::format("{:<10} {:>8} {:>8} {:>9} {:>9} {:>11} {:>9} {:>8} {:>8}\n", "", "context",
                     "weights", "gradients", "optimizer", "activations", "workspace", "exchange",
                     "total");
  auto row = [&out](const char* label, const MemoryParts& p) {
    out += fmt::format("{:<10} {:>8} {:>8} {:>9} {:>9} {:>11} {:>9} {:>8} {:>8}\n", label,
                       gb(p.context), gb(p.weights), gb(p.gradients), gb(p.optimizer),
                       gb(p.activations), gb(p.workspace), gb(p.exchange), gb(p.total()));
  };
  row("gpu0", gpus[0]);
  if (const MemoryParts* other = max_other(gpus)) row("max other", *other);
  out += fmt::format("largest batch per GPU in {} GB: {}\n", gb(v.gpu_memory_bytes),
                     largest_batch(w, c, v.framework, o, v.gpu_memory_bytes));
  return out;
}

}  // namespace gpuscale::wl
