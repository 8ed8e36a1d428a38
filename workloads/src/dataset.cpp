#include "workloads/src/dataset.hpp"

#include "sim/core/config_reader.hpp"

namespace gpuscale::wl {

const ShippedFolder& shipped_datasets() {
  static const ShippedFolder folder("dataset", "GPUSCALE_DATASETS_DIR",
                                    GPUSCALE_WORKLOADS_DIR "/datasets");
  return folder;
}

Dataset load_dataset(const std::string& name_or_path) {
  const ConfigNode doc = ConfigNode::load_file(shipped_datasets().resolve(name_or_path, "", Origin{}));
  MapReader r(doc, "dataset file", {"name", "description", "samples"});
  Dataset d;
  d.name = r.string("name", "imagenet");
  d.description = r.optional_string("description").value_or("");
  d.samples = read_integer(r.require("samples", "1281167"), "samples of dataset", 1, 1L << 40);
  return d;
}

}  // namespace gpuscale::wl
