#include "workloads/src/framework.hpp"

#include "sim/core/config_reader.hpp"

namespace gpuscale::wl {

const ShippedFolder& shipped_frameworks() {
  static const ShippedFolder folder("framework", "GPUSCALE_FRAMEWORKS_DIR",
                                    GPUSCALE_WORKLOADS_DIR "/frameworks");
  return folder;
}

FrameworkConfig load_framework(const std::string& name_or_path) {
  const ConfigNode doc =
      ConfigNode::load_file(shipped_frameworks().resolve(name_or_path, "", Origin{}));
  MapReader r(doc, "framework file", {"name", "description", "context", "workspace_limit",
                                      "optimizer_state_per_param", "update_on_kvstore"});
  FrameworkConfig f;
  f.name = r.string("name", "mxnet");
  f.description = r.optional_string("description").value_or("");
  f.context = read_bytes(r.require("context", "400 MB"), "context of framework");
  f.workspace_limit = read_bytes(r.require("workspace_limit", "1024 MiB"), "workspace_limit");
  f.optimizer_state_per_param = static_cast<int>(
      read_integer(r.require("optimizer_state_per_param", "1"), "optimizer_state_per_param", 0, 8));
  f.update_on_kvstore = read_bool(r.require("update_on_kvstore", "true"), "update_on_kvstore");
  return f;
}

}  // namespace gpuscale::wl
