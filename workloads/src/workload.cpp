#include "workloads/src/workload.hpp"

#include <fmt/format.h>

namespace gpuscale::wl {

std::string to_string(const Shape& shape) {
  return fmt::format("{}x{}x{}", shape.channels, shape.height, shape.width);
}

int bytes_per_element(Precision precision) { return precision == Precision::Fp32 ? 4 : 2; }

const char* to_string(Precision precision) {
  return precision == Precision::Fp32 ? "fp32" : "fp16";
}

}  // namespace gpuscale::wl
