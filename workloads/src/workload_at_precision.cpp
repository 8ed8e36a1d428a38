#include "workloads/src/workload_at_precision.hpp"

#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::wl {

Workload load_workload_at(const std::string& name_or_path, const std::string& precision,
                          const Origin& at, const std::vector<std::string>& overrides) {
  Workload w = load_workload(name_or_path, overrides);
  if (!precision.empty()) set_precision(w, precision, at);
  return w;
}

}  // namespace gpuscale::wl
