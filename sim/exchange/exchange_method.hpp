// A framework's gradient-exchange method: one interface, one implementation per method, each in
// its own file and registered in one table (registry.cpp). The replay (its part of the iteration
// graph: copies, reductions, collectives, host syncs and the weight updates; ReplayExchange), the
// memory model (the buffers it keeps, exchange_buffers), the outputs (describe) and the Chakra
// export of an iteration (export_trace) all ask the method; none of them knows which it is.
//
// The methods (docs/replay.md, "Gradient exchange"):
//  - kvstore_device (MXNet's kvstore=device): per key, every GPU's gradient copied to the key's
//    reducer GPU, summed there, updated once there, the weights copied back (kvstore_device.cpp);
//  - kvstore_nccl (MXNet's kvstore=nccl): per key, ncclReduce to GPU0, the update there, ncclBcast
//    (kvstore_nccl.cpp);
//  - allreduce: one process per GPU, each gradient allreduced by a collective algorithm and every
//    replica updated, grouped as the framework groups them: Horovod's tensor fusion
//    (horovod_fusion.cpp), DDP's buckets (ddp_buckets.cpp), or one allreduce per tensor
//    (per_tensor_allreduce.cpp), with what they share in allreduce_method.hpp.
// A split sample's halo exchange within the passes is spatial_halo.hpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/replay/replay_exchange.hpp"
#include "topologies/src/topology_config.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/memory_model.hpp"
#include "workloads/src/reducer_assignment.hpp"

namespace gpuscale::sim {

class ExchangeTrace;

// What a method is made from: the framework that runs it and the run's settings.
struct ExchangeSettings {
  const wl::FrameworkConfig* framework = nullptr;
  // How allreduce methods group gradients: the framework's, with the experiment's overrides.
  wl::AllreduceModel allreduce;
  // The collective algorithm an allreduce method runs (a sim/collectives registry name).
  std::string algorithm = "nccl_ring";
  wl::ReducerPolicy reducers = wl::ReducerPolicy::Greedy;  // kvstore_device's reducer GPUs
};

class ExchangeMethod : public ReplayExchange {
 public:
  explicit ExchangeMethod(ExchangeSettings settings) : settings_(std::move(settings)) {}

  // How outputs name what it does, after the framework's name: "kvstore=device per key",
  // "horovod fusion 64 MiB every 5 ms".
  virtual std::string describe() const = 0;
  // How its own copies travel between GPUs without peer access; none: as the machine routes.
  virtual std::optional<topo::RoutingMode> copy_routing() const { return std::nullopt; }

  // What it keeps in each GPU's memory for a model of `costs` trained at `precision` (the
  // dtypes of its gradients, weights and optimizer state) on `gpus` GPUs: its buffers, and
  // whether the optimizer state lives with a store rather than on every GPU. One GPU exchanges
  // nothing.
  wl::ExchangeBuffers exchange_buffers(const wl::WorkloadCosts& costs,
                                       const wl::PrecisionRecipe& precision, int gpus) const;

  // Writes the iteration's exchange and weight updates into `trace` (gpuscale run
  // --export-chakra), after the gradients it holds; one rank exchanges nothing.
  void export_trace(ExchangeTrace& trace) const;

  const ExchangeSettings& settings() const { return settings_; }
  const wl::FrameworkConfig& framework() const { return *settings_.framework; }

 protected:
  // exchange_buffers on more than one GPU.
  virtual wl::ExchangeBuffers buffers(const wl::WorkloadCosts& costs,
                                      const wl::PrecisionRecipe& precision, int gpus) const = 0;
  // export_trace on more than one rank.
  virtual void export_exchange(ExchangeTrace& trace) const = 0;
  // What a store that runs the optimizer keeps per parameter: the weight, the optimizer's state
  // and the master weight where `precision` has one.
  double stored_bytes_per_param(const wl::PrecisionRecipe& precision) const {
    return precision.weight_bytes +
           precision.optimizer_bytes_per_param(framework().optimizer_state_per_param);
  }
  // Whether the weights are updated once every gradient is exchanged, rather than each once its
  // own is (ExecutionModel::updates; the kvstores update per key whatever it says).
  virtual bool updates_after_every_exchange() const { return false; }

 private:
  ExchangeSettings settings_;
};

}  // namespace gpuscale::sim
