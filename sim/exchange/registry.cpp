#include "sim/exchange/registry.hpp"

#include "sim/exchange/methods.hpp"
#include "topologies/core/config_reader.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::sim {
namespace {

// The framework's allreduce, grouped as its file says (FrameworkConfig::allreduce, with the
// run's overrides): an allreduce buffer of 0 bytes allreduces each tensor alone.
std::unique_ptr<ExchangeMethod> make_allreduce(ExchangeSettings settings) {
  if (settings.allreduce.buffer.value <= 0) return make_per_tensor_allreduce(std::move(settings));
  if (settings.allreduce.grouping == wl::AllreduceGrouping::Buckets) {
    return make_ddp_buckets(std::move(settings));
  }
  return make_horovod_fusion(std::move(settings));
}

}  // namespace

const std::vector<ExchangeMethodEntry>& exchange_methods() {
  static const std::vector<ExchangeMethodEntry> table = {
      {"kvstore_device",
       "MXNet kvstore=device: each key copied to its reducer GPU, summed, updated there, copied "
       "back",
       make_kvstore_device, "p2p", "p2p"},
      {"kvstore_nccl",
       "MXNet kvstore=nccl: each key reduced to GPU0 (ncclReduce), updated there, broadcast",
       make_kvstore_nccl, "nccl_reduce_bcast", "nccl_reduce_bcast"},
      {"allreduce",
       "one process per GPU, gradients allreduced by --algo in groups as the framework forms "
       "them (Horovod fusion, DDP buckets, or one per tensor), every replica updated",
       make_allreduce},
  };
  return table;
}

std::vector<std::string> exchange_method_names() {
  std::vector<std::string> names;
  for (const ExchangeMethodEntry& m : exchange_methods()) names.push_back(m.name);
  return names;
}

const ExchangeMethodEntry& find_exchange_method(std::string_view name, const Origin& named_at) {
  for (const ExchangeMethodEntry& m : exchange_methods()) {
    if (m.name == name) return m;
  }
  throw ConfigError(named_at,
                    unknown_name_message("exchange method", name, exchange_method_names()));
}

}  // namespace gpuscale::sim
