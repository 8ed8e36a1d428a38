// The data-parallel training iteration that `gpuscale run` replays, as a trace graph
// (workloads/interop/trace_graph.hpp) that `gpuscale run --export-chakra` writes as a Chakra
// trace and `gpuscale replay-trace --chakra` replays (docs/interop.md, "Writing").
//
// The graph is rank 0's GPU work and the gradient exchange, as the replay builds them from
// wl::build_iteration_graph, the compute model and the framework's exchange:
//  - each layer's forward, backward-weights and backward-data kernels (compute::LayerTimes at the
//    run's batch per GPU), one after another as on the GPU's one stream, each also after the
//    kernels whose outputs it reads;
//  - the gradients, in the order they become ready, exchanged as the framework exchanges `comm`:
//    allreduce methods group them (wl::allreduce_groups: one per tensor, DDP's buckets, Horovod's
//    fusion buffers), each group an ALL_REDUCE after the backward that readies its last gradient
//    and after the previous group (one communication stream), with its copies into and out of
//    the flat buffer as kernels where the framework makes them; MXNet's kvstore=device (p2p) an
//    ALL_REDUCE per key; its kvstore=nccl a REDUCE, the update and a BROADCAST per key, one
//    collective after another;
//  - each tensor's weight update as a kernel (compute::ComputeTimeModel::update_time), after its
//    own exchange, or after every exchange and the last backward kernel where the framework
//    steps once every gradient is in (ExecutionModel::updates).
// Left out, for want of a Chakra node that means them: the host's work (kernel launches, engine
// operations and their syncs, the Python thread, the metric read-back), the input pipeline, the
// per-run set-up, and the variability of sampled runs (the times are as modelled).
#pragma once

#include "sim/experiment/experiment.hpp"
#include "sim/replay/replay.hpp"
#include "workloads/interop/trace_graph.hpp"

namespace gpuscale::sim {

// The iteration of `setup` (one that splits no sample: spatial parallelism is refused before).
interop::TraceGraph iteration_trace(const ReplaySetup& setup);

// The iteration of one configuration of an experiment, loaded as `gpuscale run` loads it
// (ReplayInputs); needs no SimGrid engine. Throws ConfigError naming --export-chakra for a run
// that splits samples (--spatial), and whatever loading the configuration throws.
interop::TraceGraph iteration_trace(const Experiment& experiment, const Configuration& config);

}  // namespace gpuscale::sim
