#include "sim/exchange/exchange_method.hpp"

#include "sim/exchange/exchange_trace.hpp"

namespace gpuscale::sim {

wl::ExchangeBuffers ExchangeMethod::exchange_buffers(const wl::WorkloadCosts& costs,
                                                     const wl::PrecisionRecipe& precision,
                                                     int gpus) const {
  // One GPU exchanges nothing: MXNet uses no kvstore there (python/mxnet/model.py
  // _create_kvstore) and updates locally; an allreduce of one rank is empty.
  if (gpus == 1) return {};
  return buffers(costs, precision, gpus);
}

void ExchangeMethod::export_trace(ExchangeTrace& trace) const {
  if (trace.ranks() > 1) return export_exchange(trace);
  std::vector<std::vector<int>> ready;
  for (const ExchangeTrace::Gradient& g : trace.gradients()) ready.push_back(g.ready);
  trace.updates(ready, updates_after_every_exchange());
}

}  // namespace gpuscale::sim
