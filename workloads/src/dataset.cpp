#include "workloads/src/dataset.hpp"

#include "topologies/core/config_reader.hpp"

namespace gpuscale::wl {

const ShippedFolder& shipped_datasets() {
  static const ShippedFolder folder("dataset", "GPUSCALE_DATASETS_DIR",
                                    "workloads/datasets");
  return folder;
}

Dataset load_dataset(const std::string& name_or_path) {
  const ConfigNode doc = ConfigNode::load_file(shipped_datasets().resolve(name_or_path, "", Origin{}));
  MapReader r(doc, "dataset file", {"name", "description", "samples", "unit", "decode"});
  Dataset d;
  d.name = r.name("name", "imagenet");
  d.description = r.optional_string("description").value_or("");
  d.samples = read_integer(r.require("samples", "1281167"), "samples of dataset", 1, 1L << 40);
  if (const ConfigNode* unit = r.find("unit")) d.unit = read_string(*unit, "unit of dataset");
  if (const ConfigNode* decode = r.find("decode")) {
    MapReader dr(*decode, "decode of dataset", {"per_sample", "clock"});
    d.decode_per_sample = read_seconds(dr.require("per_sample", "4.2 ms"), "decode per_sample");
    d.decode_clock = read_frequency(dr.require("clock", "3.0 GHz"), "decode clock");
  }
  return d;
}

Seconds Dataset::decode_time_on(Hertz clock) const {
  if (clock.value <= 0 || decode_clock.value <= 0) return decode_per_sample;
  return {decode_per_sample.value * decode_clock.value / clock.value};
}

}  // namespace gpuscale::wl
