#include "sim/experiment/replay_inputs.hpp"

#include <fmt/format.h>

#include "sim/compute/decode_kernels.hpp"
#include "sim/experiment/compute_setup.hpp"
#include "workloads/src/dataset.hpp"
#include "workloads/src/workload_at_precision.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::sim {
namespace {

// The input pipeline of one GPU: its dataset's decode cost carried to the machine's CPU, the
// decoded sample (float32: ImageRecordIter's output type) and the GPU's own link towards the
// host, whose effective bandwidth bounds its host-to-device copies. Decoding on the GPU, the CPU
// Huffman-decodes, the coefficients cross the link and the GPU's decode kernels take the batch.
InputCosts input_costs(const topo::Topology& machine, int gpu, const wl::Workload& w,
                       const wl::InputPipeline& pipeline, const Origin& pipeline_asked_at,
                       const compute::GpuSpec& spec, int batch) {
  InputCosts in;
  Hertz clock;
  for (const topo::Device& d : machine.devices()) {
    if (d.kind == topo::DeviceKind::Cpu && d.clock.value > 0) {
      clock = d.clock;
      break;
    }
  }
  const wl::Dataset dataset = wl::load_dataset(w.dataset);
  const double sample_elements = static_cast<double>(w.layers.front().output.elements());
  in.decode_s_per_image = dataset.decode.on(clock).value;
  in.sample_bytes = sample_elements * 4;
  if (pipeline.on_gpu && in.decode_s_per_image > 0) {
    if (!dataset.gpu_decode) {
      throw ConfigError(pipeline_asked_at,
                        fmt::format("dataset {} of workload {} gives no GPU decode figures "
                                    "(`gpu_decode:`): decode it on the CPU (--input-pipeline cpu)",
                                    dataset.name, w.name));
    }
    const compute::StoredImage image{dataset.gpu_decode->pixels,
                                     dataset.gpu_decode->coefficients.value};
    in.decode_s_per_image = dataset.gpu_decode->host.on(clock).value;
    in.sample_bytes = image.coefficient_bytes;
    in.gpu_decode_s = compute::gpu_decode_time(spec, compute::load_analytic_params(
                                                         compute::shipped_analytic_params_path()),
                                               image, sample_elements, batch)
                          .value;
  }
  for (const topo::Link& link : machine.links()) {
    if ((link.a != gpu && link.b != gpu) ||
        machine.devices()[static_cast<size_t>(link.other(gpu))].kind == topo::DeviceKind::Gpu) {
      continue;
    }
    in.h2d_bytes_per_s = link.effective_bandwidth().value;
    break;
  }
  return in;
}

// The workload `name` at the experiment's precision, where it names one.
wl::Workload workload_at(const Experiment& e, const std::string& name) {
  return wl::load_workload_at(name, e.precision, e.precision_written_at, e.workload_overrides);
}

// The spec of the job's first GPU; an unknown model is reported at the device's line.
compute::GpuSpec gpu_of(const topo::Topology& machine, const Placement& placement) {
  const topo::Device& gpu = machine.devices()[static_cast<size_t>(placement.gpus[0])];
  return compute::load_gpu_spec(gpu.model, gpu.origin);
}

// The routing of the run's copies between GPUs without NVLink: the experiment's, else the
// exchange method's own where it makes the copies itself (MXNet's kvstore=device), else the
// machine's.
topo::RoutingMode routing_of(const topo::Topology& machine, const Experiment& e,
                             const ExchangeMethod& exchange) {
  if (e.routing.empty()) {
    if (const auto own = exchange.copy_routing()) return *own;
  }
  return topo::routing_mode_for(machine, e.routing);
}

// A split sample's halo exchange: what each member of a group receives, layer by layer.
std::unique_ptr<const SpatialHalo> halo_of(const wl::SpatialSplit& split, const wl::Workload& whole,
                                           const wl::Workload& shard, const Configuration& c) {
  if (!split.splits()) return nullptr;
  std::vector<std::vector<wl::SpatialLayer>> members;
  for (int m = 0; m < split.ways(); ++m) {
    members.push_back(wl::spatial_exchanges(whole, shard, split, m / split.cols, m % split.cols));
  }
  return std::make_unique<SpatialHalo>(split, std::move(members), c.gpus, c.batch,
                                       wl::bytes_per_element(shard.precision));
}

}  // namespace

ReplayInputs::ReplayInputs(const Experiment& e, const Configuration& c)
    : machine(machine_for(e.topology, e.topology_overrides, c.gpus, e.topology_document)),
      placement(place_job(machine, c.gpus)),
      framework(framework_of(e)),
      exchange_choice(resolve_exchange(c.comm, framework)),
      exchange(make_exchange(exchange_choice, framework, allreduce_of(e, framework))),
      router(machine, routing_of(machine, e, *exchange)),
      spatial(wl::spatial_split(spatial_ways(e, c))),
      whole(workload_at(e, c.workload)),
      workload(wl::spatial_shard(whole, spatial)),
      costs(wl::compute_costs(workload)),
      gpu(gpu_of(machine, placement)),
      compute(compute_model_of(workload, costs, framework, gpu, e.profile)),
      halo(halo_of(spatial, whole, workload, c)) {
  setup.topology = &machine;
  setup.router = &router;
  setup.gpus = placement.gpus;
  setup.rings = placement.rings;
  setup.node_of_rank = placement.node_of_rank;
  setup.workload = &workload;
  setup.costs = &costs;
  setup.compute = compute.get();
  setup.framework = &framework;
  setup.precision = &framework.precision_of(workload);
  setup.mechanisms = mechanisms_without(e.without);
  setup.input = input_costs(machine, placement.gpus[0], workload, framework.input,
                            e.input_pipeline_written_at, gpu, c.batch);
  setup.batch = c.batch;
  setup.exchange = exchange.get();
  setup.halo = halo.get();
  setup.protocol = e.protocol;
  setup.iterations = e.samples > 0 ? e.samples + 1 : e.iterations;  // the first warms up
  setup.samples = e.samples;
  setup.seed = e.seed;
  setup.record_timeline = e.record_timeline;
}

}  // namespace gpuscale::sim
