#include "workloads/src/workload_document.hpp"

#include "topologies/core/derived_document.hpp"

namespace gpuscale::wl {

const ShippedFolder& shipped_workloads() {
  static const ShippedFolder folder("workload", "GPUSCALE_WORKLOADS_DIR", "workloads");
  return folder;
}

ConfigNode load_workload_document(const std::string& name_or_path,
                                  const std::vector<std::string>& overrides) {
  ConfigNode doc = load_derived_document(shipped_workloads().resolve(name_or_path, "", Origin{}),
                                         shipped_workloads(), "name:, input:, layers: ...");
  for (const std::string& assignment : overrides) apply_override(doc, assignment);
  return doc;
}

}  // namespace gpuscale::wl
