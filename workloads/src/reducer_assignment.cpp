#include "workloads/src/reducer_assignment.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace gpuscale::wl {

std::vector<int> assign_reducers(const std::vector<double>& tensor_bytes, int gpus,
                                 ReducerPolicy policy) {
  if (gpus < 1) throw std::invalid_argument("assign_reducers: need at least one GPU");
  std::vector<int> reducer(tensor_bytes.size(), 0);
  if (policy == ReducerPolicy::AllOnGpu0) return reducer;

  std::vector<size_t> largest_first(tensor_bytes.size());
  std::iota(largest_first.begin(), largest_first.end(), size_t{0});
  std::stable_sort(largest_first.begin(), largest_first.end(),
                   [&](size_t a, size_t b) { return tensor_bytes[a] > tensor_bytes[b]; });
  std::vector<double> assigned(static_cast<size_t>(gpus), 0.0);
  for (size_t tensor : largest_first) {
    const auto least = std::min_element(assigned.begin(), assigned.end());  // first minimum
    reducer[tensor] = static_cast<int>(least - assigned.begin());
    *least += tensor_bytes[tensor];
  }
  return reducer;
}

}  // namespace gpuscale::wl
