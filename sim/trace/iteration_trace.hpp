// The data-parallel training iteration that `gpuscale run` replays, as a trace graph
// (workloads/interop/trace_graph.hpp) that `gpuscale run --export-chakra` writes as a Chakra
// trace and `gpuscale replay-trace --chakra` replays (docs/interop.md, "Writing").
//
// The graph is rank 0's GPU work and the gradient exchange, as the replay builds them from
// wl::build_iteration_graph, the compute model and the exchange method:
//  - each layer's forward, backward-weights and backward-data kernels (compute::LayerTimes at the
//    run's batch per GPU), one after another as on the GPU's one stream, each also after the
//    kernels whose outputs it reads;
//  - the gradients, in the order they become ready, exchanged and their weights updated as the
//    exchange method writes them (ExchangeMethod::export_trace): allreduce methods' groups (one
//    per tensor, DDP's buckets, Horovod's fusion buffers) as ALL_REDUCEs with their copies into
//    and out of the flat buffer as kernels, MXNet's kvstore=device (p2p) an ALL_REDUCE per key,
//    its kvstore=nccl a REDUCE, the update and a BROADCAST per key; each update a kernel
//    (compute::ComputeTimeModel::update_time).
// Left out, for want of a Chakra node that means them: the host's work (kernel launches, engine
// operations and their syncs, the Python thread, the metric read-back), the input pipeline, the
// per-run set-up, and the variability of sampled runs (the times are as modelled).
#pragma once

#include <string>

#include "sim/exchange/exchange_method.hpp"
#include "sim/experiment/experiment.hpp"
#include "sim/replay/replay.hpp"
#include "workloads/interop/trace_graph.hpp"

namespace gpuscale::sim {

// The iteration of `setup` (one that splits no sample: spatial parallelism is refused before),
// exchanged by `method`, which outputs call `exchange`.
interop::TraceGraph iteration_trace(const ReplaySetup& setup, const ExchangeMethod& method,
                                    const std::string& exchange);

// The iteration of one configuration of an experiment, loaded as `gpuscale run` loads it
// (ReplayInputs); needs no SimGrid engine. Throws ConfigError naming --export-chakra for a run
// that splits samples (--spatial), and whatever loading the configuration throws.
interop::TraceGraph iteration_trace(const Experiment& experiment, const Configuration& config);

}  // namespace gpuscale::sim
