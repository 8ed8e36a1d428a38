#include "workloads/src/workload.hpp"

#include <fmt/format.h>

namespace gpuscale::wl {

std::string to_string(const Shape& shape) {
  return fmt::format("{}x{}x{}", shape.channels, shape.height, shape.width);
}

double weight_elements(const Layer& layer) {
  const LayerParams& p = layer.params;
  switch (layer.type) {
    case LayerType::Conv:
      return static_cast<double>(p.filters) * p.kernel_h * p.kernel_w *
             static_cast<double>(layer.input.channels / p.groups);
    case LayerType::Fc:
      return static_cast<double>(p.filters) * static_cast<double>(layer.input.channels) *
             static_cast<double>(layer.input.height) * static_cast<double>(layer.input.width);
    case LayerType::Embedding:
      return static_cast<double>(p.vocab) * static_cast<double>(p.filters);
    case LayerType::Lstm:  // weight_ih and weight_hh of every direction
      return (p.bidirectional ? 2.0 : 1.0) * 4 * static_cast<double>(p.filters) *
             static_cast<double>(layer.input.channels + p.filters);
    default: return 0;
  }
}

double attention_kv_width(const Layer& layer) {
  const LayerParams& p = layer.params;
  const double d = static_cast<double>(layer.input.channels);
  return p.kv_heads == 0 ? d : d * p.kv_heads / p.heads;
}

int bytes_per_element(Precision precision) { return precision == Precision::Fp32 ? 4 : 2; }

const char* to_string(Precision precision) {
  return precision == Precision::Fp32 ? "fp32" : "fp16";
}

}  // namespace gpuscale::wl
