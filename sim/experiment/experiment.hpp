// An experiment: every combination of workloads x comm methods x batch sizes x GPU counts on one
// machine, each configuration simulated in a process of its own (isolated.hpp), and the results
// that `gpuscale run` prints: iteration and epoch time, speedup against the same method on one
// GPU, throughput, the FP+BP / WU breakdown, exposed communication, memory per GPU and link
// utilisation.
//
// Epoch: the run's one-time set-up (run_setup.hpp) plus the steady-state iteration time times
// the iterations an epoch needs, ceil(images / (gpus x batch)); strong scaling keeps `images` fixed, weak scaling multiplies it
// by the GPUs (the study's 256K/512K/1M/2M for 1/2/4/8 GPUs).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/exchange/exchange_choice.hpp"
#include "sim/exchange/exchange_method.hpp"
#include "sim/replay/timeline.hpp"
#include "topologies/core/config_tree.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/memory_model.hpp"

namespace gpuscale::sim {

enum class Scaling { Strong, Weak };

// Sampled iterations of one configuration: each is simulated, so a 512-GPU run of this many takes
// about a minute.
inline constexpr int kMaxSamples = 1000;

struct Experiment {
  std::string topology = "dgx1-v100";
  // workloads/frameworks/NAME.yaml or a file; empty: each workload's own (framework_name_for).
  std::string framework;
  // A framework held in memory (`gpuscale fit` trying host costs); replaces `framework`'s file.
  std::shared_ptr<const wl::FrameworkConfig> framework_config;
  std::vector<std::string> without;             // host mechanisms switched off (mechanism_names)
  std::vector<std::string> topology_overrides;  // --set on the machine ("link_kinds.nvlink...")
  // --set on every workload ("input.height=96", written `workload.input.height=96`).
  std::vector<std::string> workload_overrides;
  // A machine written inline (a study's derived machine, `base:` resolved); `topology` names it.
  std::shared_ptr<const ConfigNode> topology_document;
  std::vector<std::string> workloads = {"resnet-50"};
  // The precision recipe every workload trains at (wl::PrecisionRecipe, as the framework runs
  // it) and where it was named; empty: each workload's own `precision:`.
  std::string precision;
  Origin precision_written_at;
  std::vector<int> gpus = {1, 2, 4, 8};
  // Where a file wrote each of `gpus` (an experiment's or a study's line); empty: --gpus.
  std::vector<Origin> gpus_written_at;
  std::vector<int> batches = {32};              // per GPU
  // Strong scaling at a fixed global batch (samples per exchange over all GPUs): each GPU count
  // runs its share, in `accumulate` micro-batches; 0: `batches` per GPU instead.
  long global_batch = 0;
  Origin global_batch_written_at{"--global-batch", 0};
  // Micro-batches each GPU runs per exchange (gradient accumulation: all but the last skip the
  // exchange and the update); 0: one, or with a global batch the fewest whose share fits the
  // GPUs' memory.
  int accumulate = 0;
  // The gradient exchanges (sim/exchange/exchange_choice.hpp: a --comm alias, an exchange method,
  // or allreduce:ALGORITHM), and where a file wrote each (empty: --comm, --exchange, --algo).
  std::vector<std::string> comms = {"p2p", "nccl"};
  std::vector<Origin> comms_written_at;
  std::string routing;                          // empty: the machine's own
  Scaling scaling = Scaling::Strong;
  long images = 0;                              // 0: the dataset's samples per epoch
  // Overrides of the framework's allreduce grouping (FrameworkConfig::allreduce): its buffer (the
  // Horovod fusion buffer or the DDP bucket cap, MB; 0 = one allreduce per tensor) and its cycle.
  std::optional<double> fusion_mb;
  std::optional<double> fusion_cycle_ms;
  // Overrides the framework's input.decode_threads (MXNet's --data-nthreads): the threads that
  // decode and augment each batch for all GPUs of a process.
  std::optional<int> decode_threads;
  // "dali": the framework's DALI pipeline (FrameworkConfig::dali_input, images decoded on the
  // GPU) in place of its own; empty: its own. Where it was asked for, to blame a framework that
  // has none.
  std::string input_pipeline;
  Origin input_pipeline_written_at;
  std::string protocol = "auto";
  // Spatial parallelism: each sample split over this many GPUs (workloads/src/
  // spatial_partition.hpp); every GPU count but 1 must be a multiple of it, and one GPU (the
  // speedup's baseline) holds whole samples. 1: data parallelism alone.
  int spatial = 1;
  Origin spatial_written_at{"--spatial", 0};  // where `spatial` is set: an experiment file's line
  std::string profile;                          // measured profile file; empty: analytic model
  int iterations = 4;
  // Sampled variability (docs/variability.md): `samples` iterations after a warm-up one, each
  // drawn from the machine's distributions with `seed`; 0 replays every time as modelled.
  int samples = 0;                              // at most kMaxSamples
  std::uint64_t seed = 1;
  bool record_timeline = false;                 // fill ResultRow::timeline (--trace)
  // Fill ResultRow::link_uses, what the machine pictures draw (a study's links-*.svg, the page
  // of `gpuscale serve`): one entry per link direction used, some 165,000 at 16,384 GPUs, which
  // cost a tenth of such a run to send back from its child process when nothing reads them.
  bool record_link_uses = false;
  // The validation suite whose measurements `run` prints beside its rows (a shipped name under
  // validation/, a suite folder or its suite.yaml), and where it was named; empty: none. Only
  // the output reads it: the simulation is the same with or without.
  std::string study;
  Origin study_written_at{"--study", 0};
};

// One configuration of an experiment: a workload trained with one gradient exchange and batch on
// some GPUs.
struct Configuration {
  std::string workload;
  std::string comm;  // the exchange, by the name outputs print (ExchangeChoice::name)
  int batch = 32;  // per GPU (per micro-batch when accumulating)
  int gpus = 1;
  int accumulate = 1;  // micro-batches per exchange
};

struct LinkUtilisation {
  double max = 0;
  double mean = 0;
};

// One direction of one link of the machine (topo::Topology::links()): the share of its bandwidth
// the exchange used over an iteration.
struct LinkUse {
  int link = 0;
  bool forward = true;  // from the link's `a` to its `b`
  double utilisation = 0;
};

// The iteration time over a sampled run's iterations (Experiment::samples): its 10th, 50th and
// 90th percentiles (the mean is ResultRow::iteration_s), and the speedups they give against the
// mean of one GPU (the 10th percentile of the speedup comes from the 90th of the iteration time).
struct IterationSpread {
  int samples = 0;  // 0: a deterministic run
  bool machine_varies = false;  // the machine names a distribution that varies
  double p10_s = 0, p50_s = 0, p90_s = 0;
  double speedup_p10 = 0, speedup_p50 = 0, speedup_p90 = 0;
};

struct ResultRow {
  std::string topology, workload, comm, scaling;
  std::string exchange;  // how the framework ran `comm` (its name, ExchangeMethod::describe)
  std::string framework;  // the framework that ran it (FrameworkConfig::name)
  std::string precision;  // the recipe it trained at (PrecisionRecipe::name)
  int gpus = 1;
  int batch = 1;         // per GPU and micro-batch
  int accumulate = 1;    // micro-batches per exchange (Configuration::accumulate)
  int spatial_ways = 1;  // the GPUs sharing each sample (Experiment::spatial)
  // throughput_img_s: samples per second over all GPUs, whatever a sample is: `unit` says
  // (the workload's dataset's: "images", "sentence pairs", "sequences").
  double iteration_s = 0, epoch_s = 0, speedup = 0, throughput_img_s = 0;
  std::string unit = "samples";
  double setup_s = 0;  // paid once per run, in epoch_s (run_setup.hpp)
  double fpbp_s = 0, wu_s = 0, exposed_comm_s = 0;
  double input_wait_s = 0;  // rank 0's GPU, done with a batch, waiting for the next one
  // iteration_s = fpbp_s + wu_s + input_wait_s + rest_s; overlap_s is in both fpbp_s and wu_s
  // (ReplayResult)
  double overlap_s = 0, rest_s = 0;
  IterationSpread spread;
  double memory_gpu0_gb = 0, memory_max_other_gb = 0;
  double memory_before_training_gb = 0;  // GPU0 once set up: context, weights, gradients
  double gpu_memory_gb = 0;               // the memory of the job's smallest GPU
  // Whether every GPU's predicted memory fits it: a run that does not could not have trained.
  bool fits_memory() const { return std::max(memory_gpu0_gb, memory_max_other_gb) <= gpu_memory_gb; }
  std::map<std::string, LinkUtilisation> link_utilisation;  // by link kind
  std::vector<LinkUse> link_uses;  // every link direction the exchange used (when recorded)
  std::vector<std::vector<double>> allreduce_bytes;  // ReplayResult::allreduce_bytes
  long activities = 0;
  double wall_s = 0;  // host time the simulation took
  Timeline timeline;  // when the experiment records one
};

// A `--set` (or an experiment's `set:` entry, written at `written_at`) added where it belongs:
// `workload.KEY.PATH=VALUE` to every workload (the prefix dropped), any other to the machine.
// Throws ConfigError for a key only a workload file has written without the prefix.
void add_override(Experiment& e, const std::string& assignment, const Origin& written_at);

// The framework `workload` runs under in the experiment: the experiment's, else the workload's
// own (wl::framework_for).
std::string framework_name_for(const Experiment& e, const std::string& workload);
// The experiment narrowed to `workload`, its framework named (framework_name_for).
Experiment for_workload(const Experiment& e, const std::string& workload);

// The experiment's framework: the one held in memory, else its file; the workloads' own
// (framework_name_for) when it names none, which must then be one for all of them (else a
// ConfigError asking for --framework).
wl::FrameworkConfig framework_of(const Experiment& e);

// How the experiment's allreduce methods group gradients: the framework's, with the experiment's
// overrides (`--fusion-mb`, `fusion_cycle_ms`).
wl::AllreduceModel allreduce_of(const Experiment& e, const wl::FrameworkConfig& framework);
// The allreduce buffer the experiment's allreduce methods use, MB (the framework's unless
// overridden): what study outputs print.
double allreduce_buffer_mb(const Experiment& e);
// The decode threads of the experiment's input pipeline (the framework's unless overridden).
int decode_threads_of(const Experiment& e);
// What `input_pipeline` may name: "cpu" (the framework's own) and "dali".
const std::vector<std::string>& input_pipeline_names();

// The experiment's gradient exchanges resolved in its `framework`, in order; throws ConfigError
// where each is named (a file's line, or --comm) for a method the framework lacks.
std::vector<ExchangeChoice> exchanges_of(const Experiment& e, const wl::FrameworkConfig& framework);

// The gradient exchange `comm` names in the experiment's `framework`, made with the
// experiment's allreduce grouping; throws ConfigError for a method the framework lacks.
std::unique_ptr<ExchangeMethod> exchange_of(const Experiment& e, const wl::FrameworkConfig& framework,
                                            const std::string& comm);

// What the memory model needs to know of a configuration of `gpus` GPUs at `batch` per GPU: the
// buffers `method` keeps for a model of `costs` trained at `precision`, and the convolutions'
// workspace at a batch (compute_setup.hpp's workspace_of).
wl::MemoryOptions memory_options_of(const ExchangeMethod& method, const wl::WorkloadCosts& costs,
                                    const wl::PrecisionRecipe& precision, int gpus, int batch,
                                    std::function<double(int)> workspace_bytes);

// Why simulating `exchange` on `gpus` GPUs takes the simulator minutes, where it does; empty where
// it takes about a second or less:
// - MXNet's kvstore=device over more than 16 GPUs, whose per-key copies all share the fabric flow
//   by flow, grows with the square of the GPUs (1e-3 s x G^2: 0.8 s at 32 GPUs, 2.6 s at 64,
//   15 s at 128, 60 s at 256 measured on a SuperPOD, docs/replay.md "speed"); said from 30 s.
// - An allreduce whose schedule runs flow by flow at that size (flow_by_flow_reason).
std::string slow_simulation_reason(const ExchangeChoice& exchange, int gpus);

// One configuration simulated in this process (one SimGrid engine per process: see isolated.hpp;
// its row crosses back by result_row_codec.hpp); its speedup is left at 0.
ResultRow simulate_configuration(const Experiment& experiment, const Configuration& config);

// Sets row.speedup against the epoch of the same method, workload and batch on one GPU (weak
// scaling: the throughput ratio), and a sampled row's speedup percentiles (IterationSpread).
void set_speedup(ResultRow& row, Scaling scaling, double one_gpu_epoch_s);

// The GPUs that share each sample in `config` (Experiment::spatial; one GPU holds whole samples).
int spatial_ways(const Experiment& experiment, const Configuration& config);
// The samples one iteration of `config` trains: its GPUs' batches (times its micro-batches),
// less what groups share.
double samples_per_iteration(const Experiment& experiment, const Configuration& config);

// Throws ConfigError when a GPU count of the experiment does not fit its machine, or cannot be
// split into its spatial groups, naming where the count is written: run_experiment checks this
// before it simulates anything.
void check_gpu_counts(const Experiment& experiment);

// Runs every configuration; `progress(done, total, row)` after each (for stderr).
std::vector<ResultRow> run_experiment(
    const Experiment& experiment,
    const std::function<void(int, int, const ResultRow&)>& progress = nullptr);

}  // namespace gpuscale::sim
