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
  MapReader r(doc, "dataset file",
              {"name", "description", "samples", "unit", "decode", "gpu_decode"});
  Dataset d;
  d.name = r.name("name", "imagenet");
  d.description = r.optional_string("description").value_or("");
  d.samples = read_integer(r.require("samples", "1281167"), "samples of dataset", 1, 1L << 40);
  if (const ConfigNode* unit = r.find("unit")) d.unit = read_string(*unit, "unit of dataset");
  if (const ConfigNode* decode = r.find("decode")) {
    MapReader dr(*decode, "decode of dataset", {"per_sample", "clock"});
    d.decode.per_sample = read_seconds(dr.require("per_sample", "4.2 ms"), "decode per_sample");
    d.decode.clock = read_frequency(dr.require("clock", "3.0 GHz"), "decode clock");
  }
  if (const ConfigNode* gpu = r.find("gpu_decode")) {
    MapReader gr(*gpu, "gpu_decode of dataset",
                 {"host_per_sample", "clock", "pixels", "coefficients"});
    GpuDecodeWork& g = d.gpu_decode.emplace();
    g.host.per_sample =
        read_seconds(gr.require("host_per_sample", "1.5 ms"), "gpu_decode host_per_sample");
    g.host.clock = read_frequency(gr.require("clock", "2.2 GHz"), "gpu_decode clock");
    g.pixels = read_number(gr.require("pixels", "188600"), "gpu_decode pixels", 1, 1e9);
    g.coefficients = read_bytes(gr.require("coefficients", "1146 KB"), "gpu_decode coefficients");
  }
  return d;
}

Seconds CoreTime::on(Hertz cpu_clock) const {
  if (cpu_clock.value <= 0 || clock.value <= 0) return per_sample;
  return {per_sample.value * clock.value / cpu_clock.value};
}

}  // namespace gpuscale::wl
