// The exchange methods, one file each (exchange_method.hpp); the registry (registry.cpp) is the
// only caller.
#pragma once

#include <memory>

#include "sim/exchange/exchange_method.hpp"

namespace gpuscale::sim {

std::unique_ptr<ExchangeMethod> make_kvstore_device(ExchangeSettings settings);
std::unique_ptr<ExchangeMethod> make_kvstore_nccl(ExchangeSettings settings);
std::unique_ptr<ExchangeMethod> make_horovod_fusion(ExchangeSettings settings);
std::unique_ptr<ExchangeMethod> make_ddp_buckets(ExchangeSettings settings);
std::unique_ptr<ExchangeMethod> make_per_tensor_allreduce(ExchangeSettings settings);

}  // namespace gpuscale::sim
