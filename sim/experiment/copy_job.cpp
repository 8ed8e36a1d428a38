#include "sim/experiment/copy_job.hpp"

#include <fmt/format.h>

#include <string>

#include "sim/engine/isolated.hpp"
#include "sim/experiment/collective_run.hpp"
#include "topologies/core/error.hpp"
#include "topologies/src/topology_loader.hpp"

namespace gpuscale::sim {
namespace {

// "gpu0 ... gpu7": the GPUs a copy may name.
std::string gpu_range(const topo::Topology& t) {
  const auto& devices = t.devices();
  return fmt::format("{}'s GPUs: {} ... {}", t.name(), devices[t.gpus().front()].name,
                     devices[t.gpus().back()].name);
}

// The GPU named by the `argument` (SRC or DST), or a ConfigError saying which names exist.
int find_gpu(const topo::Topology& t, const std::string& argument, const std::string& name) {
  const Origin where{argument, 0};
  const auto device = t.find_device(name);
  if (!device) {
    throw ConfigError(where, fmt::format("{} has no device '{}' ({})", t.name(), name,
                                         gpu_range(t)));
  }
  const topo::Device& d = t.devices()[*device];
  if (d.kind != topo::DeviceKind::Gpu) {
    throw ConfigError(where, fmt::format("{} is a {}, not a GPU: a copy runs between two GPUs ({})",
                                         name, topo::to_string(d.kind), gpu_range(t)));
  }
  return *device;
}

}  // namespace

CopyJobResult run_copy_job(const CopyJob& job) {
  CopyJobResult result;
  result.machine = topo::Topology::build(topo::load_topology_config(job.topology,
                                                                    job.topology_overrides));
  const topo::Topology& t = result.machine;
  result.routing = topo::routing_mode_for(t, job.routing);
  result.src = find_gpu(t, "SRC", job.src);
  result.dst = find_gpu(t, "DST", job.dst);
  if (result.src == result.dst) {
    throw ConfigError(Origin{"DST", 0}, fmt::format("{} is the source too: name two different "
                                                    "GPUs", job.dst));
  }
  const topo::Router router(t, result.routing);
  result.route = router.route(result.src, result.dst);
  result.simulated_s =
      run_isolated_as([&] { return simulate_copy(t, router, result.src, result.dst, job.bytes); });
  return result;
}

}  // namespace gpuscale::sim
