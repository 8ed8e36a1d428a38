// One training iteration of a Megatron-LM layout simulated on SimGrid (DagExecutor): the 1F1B
// schedule of m micro-batches over p stages (one_f_one_b.hpp), each pass its stage's kernels on
// one GPU followed by the stage's tensor-parallel allreduces, activations and their gradients
// sent between neighbouring stages' GPUs, then each stage's data-parallel gradient allreduce over
// its d replicas (after the stage's last backward, as Megatron-LM starts it once its pipeline
// has flushed) and the optimizer step.
//
// Symmetry (docs/replay.md, "Symmetry above 16 GPUs"; docs/parallelism.md): the kernels of one
// GPU per stage are simulated (pipeline 0, tensor rank 0), and its activations go to the next
// stage's tensor rank 0; the other replicas and tensor ranks run the same passes at the same
// times. The data-parallel allreduces run over the real GPU sets of every stage and tensor rank
// at once (t p rings of d GPUs), so they share links as they do on the machine; above 16
// replicas each stage's t of them are evaluated side by side from their link loads
// (lock_step.hpp), which leaves out only what one stage's exchange shares with another's that
// overlaps it in time. A tensor-parallel allreduce (an NCCL ring over the stage's t GPUs, inside
// one node) is simulated once over the real GPUs and links before the iteration starts, and every
// one of the pipeline's 4 L m is a delay of that length: nothing else crosses a node's NVLink
// fabric during the pipeline (the activations leave through the NICs, the data-parallel exchange
// comes after), so they would all take the same time, and there are 4 L m of them (73,728 for
// GPT-3 at m = 192), each some hundred flows.
#pragma once

#include <string>
#include <vector>

#include "sim/engine/lock_step.hpp"
#include "sim/experiment/machine_setup.hpp"
#include "topologies/src/routing.hpp"

namespace gpuscale::par {

// What one stage's GPU does, per micro-batch and per iteration.
struct StageWork {
  double forward_s = 0;   // its kernels' time in one micro-batch's forward
  double backward_s = 0;  // and backward (a recomputed forward included)
  double weight_cast_s = 0;  // casts of its weights in the first micro-batch's forward (FP8)
  int forward_allreduces = 0;   // tensor-parallel allreduces in forward
  int backward_allreduces = 0;  // and in backward
  double gradient_bytes = 0;    // each GPU's gradients, allreduced over the d replicas
  // Each GPU's parameters at the model's dtype, all-gathered after a ZeRO-1 step (the updated
  // shards: Megatron's distributed optimizer gathers the model's 16-bit parameters, not its
  // FP32 gradients).
  double parameter_bytes = 0;
  double optimizer_s = 0;       // the optimizer step (on 1/d of the parameters with ZeRO-1)
};

struct PipelineJob {
  const topo::Topology* machine = nullptr;
  const topo::Router* router = nullptr;
  sim::Placement placement;  // the job's GPUs in rank order: rank = tensor + t (replica + d stage)
  int tp = 1, pp = 1, dp = 1;
  int micro_batches = 1;
  bool zero1 = false;  // reduce-scatter, optimizer step, allgather instead of allreduce, step
  std::vector<StageWork> stages;
  double tp_allreduce_bytes = 0;  // s b h x 2 bytes
  double activation_bytes = 0;    // sent between stages per micro-batch, each way
  std::string protocol = "auto";  // NCCL protocol of every collective (sim/replay/protocol_choice)
  // How the data-parallel exchanges run: evaluated from their link loads under symmetry, or
  // every flow (to compare the two).
  sim::FlowDetail detail = sim::FlowDetail::AsReplayed;
};

struct StageResult {
  double busy_s = 0;         // its passes, kernels and tensor-parallel allreduces
  double bubble = 0;         // idle share of the pipeline's time
  double last_backward_s = 0;   // when its last backward ended, from the iteration's start
  double dp_s = 0;           // its data-parallel exchange (tensor rank 0's group)
  double end_s = 0;          // when its optimizer step ended
};

struct PipelineResult {
  double iteration_s = 0;
  double pipeline_s = 0;     // until the last backward of any stage
  double bubble = 0;         // mean over stages of StageResult::bubble
  double tp_allreduce_s = 0;    // one tensor-parallel allreduce
  double tp_bytes_per_gpu = 0;  // one tensor-parallel allreduce: bytes each GPU sends on links
  double pp_transfer_s = 0;     // mean time of one activation (or gradient) transfer
  std::vector<StageResult> stages;
  long activities = 0;
};

// Creates the SimGrid engine: once per process (wrap in sim::run_isolated).
PipelineResult simulate_pipeline(const PipelineJob& job);

}  // namespace gpuscale::par
