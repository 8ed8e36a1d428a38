#include "tools/gpuscale/train_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "sim/parallel/train_job.hpp"
#include "sim/parallel/train_output.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "topologies/core/csv.hpp"
#include "topologies/core/error.hpp"
#include "workloads/src/precision_recipe.hpp"

namespace gpuscale::cli {
namespace {

using nlohmann::json;

struct TrainOptions {
  par::TrainJob job;
  std::vector<int> tps, pps;  // one each, or with --sweep the values allowed (none: all)
  int dp = 0;    // 0: all the GPUs left (--gpus / (t p))
  int gpus = 0;  // the sweep's GPU count; for one layout, t p d
  bool sweep = false;
  std::string recompute = "none";
  std::string format = "table";
};

constexpr double kGB = 1e9;

std::string results_csv(const std::vector<par::TrainResult>& results) {
  std::string out = "topology,gpu,gpus,tp,pp,dp,micro_batch,global_batch,micro_batches,zero1,"
                    "recompute,iteration_s,bubble,bubble_closed_form,tokens_per_s,mfu,"
                    "tp_comm_s,pp_comm_s,dp_comm_s,memory_per_gpu_bytes,fits,precision\n";
  const auto g = [](double v) { return fmt::format("{:.9g}", v); };
  for (const par::TrainResult& r : results) {
    const par::ParallelLayout& l = r.layout;
    out += csv_record({r.topology, r.gpu, std::to_string(l.gpus()), std::to_string(l.tp),
                       std::to_string(l.pp), std::to_string(l.dp), std::to_string(l.micro_batch),
                       std::to_string(l.global_batch), std::to_string(r.micro_batches),
                       l.zero1 ? "true" : "false", par::to_string(l.recompute),
                       g(r.sim.iteration_s), g(r.sim.bubble), g(r.bubble_closed_form),
                       g(r.tokens_per_s), g(r.mfu), g(r.tp_comm_s), g(r.pp_comm_s),
                       g(r.dp_comm_s), g(r.memory_per_gpu), r.fits ? "true" : "false",
                       r.precision});
  }
  return out;
}

std::string title(const TrainOptions& o, const par::TrainResult& r) {
  const par::ParallelLayout& l = r.layout;
  return fmt::format("{} on {} ({} x {}), micro-batch {}, global batch {}, recompute {}{}{}\n"
                     "precision {}: {}\n",
                     o.job.workload, r.topology, l.gpus(), r.gpu, l.micro_batch, l.global_batch,
                     par::to_string(l.recompute), l.sequence_parallel ? ", sequence parallel" : "",
                     l.zero1 ? ", ZeRO-1" : "", r.precision, r.precision_runs_as);
}

std::string one_table(const TrainOptions& o, const par::TrainResult& r) {
  const par::ParallelLayout& l = r.layout;
  std::string out = title(o, r);
  out += fmt::format("layout: TP {} x PP {} x DP {}, m = {} micro-batches per pipeline\n\n", l.tp,
                     l.pp, l.dp, r.micro_batches);
  const auto line = [&](const std::string& name, const std::string& value) {
    out += fmt::format("{:<34} {}\n", name, value);
  };
  line("iteration", fmt::format("{:.3f} s", r.sim.iteration_s));
  line("pipeline (until the last backward)", fmt::format("{:.3f} s", r.sim.pipeline_s));
  line("bubble, simulated (mean of stages)", fmt::format("{:.2f} %", 100 * r.sim.bubble));
  line("bubble, (p-1)/(m+p-1)", fmt::format("{:.2f} %", 100 * r.bubble_closed_form));
  line("tokens/s", fmt::format("{:.0f}", r.tokens_per_s));
  line("MFU (model FLOPs / tensor peak)", fmt::format("{:.1f} %", 100 * r.mfu));
  line("TFLOP/s per GPU (Narayanan eq. 3)", fmt::format("{:.1f}", r.tflops_per_gpu_eq3));
  line("TP comm per stage", fmt::format("{:.3f} s ({:.3f} ms and {:.1f} MB sent per GPU per "
                                        "allreduce)",
                                        r.tp_comm_s, r.sim.tp_allreduce_s * 1e3,
                                        r.sim.tp_bytes_per_gpu / 1e6));
  line("PP comm per stage", fmt::format("{:.3f} s ({:.3f} ms per send)", r.pp_comm_s,
                                        r.sim.pp_transfer_s * 1e3));
  line("DP comm (slowest stage)", fmt::format("{:.3f} s", r.dp_comm_s));
  line("memory per GPU (fullest stage)",
       fmt::format("{:.1f} GB of {:.1f} GB: {}", r.memory_per_gpu / kGB, r.gpu_memory / kGB,
                   r.fits ? "fits" : "does not fit"));
  out += fmt::format("\n{:>5} {:>9} {:>9} {:>8} {:>7} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
                     "stage", "fwd", "bwd", "busy", "bubble", "DP", "weights", "grads", "optim",
                     "activ", "memory");
  out += fmt::format("{:>5} {:>9} {:>9} {:>8} {:>7} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "",
                     "(ms)", "(ms)", "(s)", "(%)", "(s)", "(GB)", "(GB)", "(GB)", "(GB)", "(GB)");
  for (size_t k = 0; k < r.sim.stages.size(); ++k) {
    const par::StageResult& s = r.sim.stages[k];
    const par::StageMemory& m = r.memory[k];
    out += fmt::format(
        "{:>5} {:>9.2f} {:>9.2f} {:>8.3f} {:>7.2f} {:>7.3f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} "
        "{:>8.2f}\n",
        k, r.stage_times[k].forward_s * 1e3, r.stage_times[k].backward_s * 1e3, s.busy_s,
        100 * s.bubble, s.dp_s, m.weights / kGB, m.gradients / kGB, m.optimizer / kGB,
        m.activations / kGB, m.total() / kGB);
  }
  return out;
}

std::string sweep_table(const TrainOptions& o, const std::vector<par::TrainResult>& results) {
  std::string out = title(o, results.front());
  out += fmt::format("{} valid layouts, fastest first\n\n", results.size());
  constexpr const char* kLine = "{:>3} {:>3} {:>5} {:>6} {:>10} {:>7} {:>7} {:>10} {:>6} {:>8} {:>5}\n";
  out += fmt::format(kLine, "TP", "PP", "DP", "m", "iteration", "bubble", "(p-1)/", "tokens/s",
                     "MFU", "memory", "fits");
  out += fmt::format(kLine, "", "", "", "", "(s)", "(%)", "(m+p-1)", "", "(%)", "(GB)", "");
  for (const par::TrainResult& r : results) {
    const par::ParallelLayout& l = r.layout;
    out += fmt::format(kLine, l.tp, l.pp, l.dp, r.micro_batches,
                       fmt::format("{:.3f}", r.sim.iteration_s),
                       fmt::format("{:.2f}", 100 * r.sim.bubble),
                       fmt::format("{:.2f}", 100 * r.bubble_closed_form),
                       fmt::format("{:.0f}", r.tokens_per_s), fmt::format("{:.1f}", 100 * r.mfu),
                       fmt::format("{:.1f}", r.memory_per_gpu / kGB), r.fits ? "yes" : "no");
  }
  return out;
}

void run(TrainOptions o) {
  o.job.layout.recompute = par::recompute_by_name(o.recompute);
  std::vector<par::TrainResult> results;
  if (o.sweep) {
    if (o.gpus < 1) throw ConfigError({"--sweep", 0}, "needs --gpus N, the GPUs to lay out");
    results = par::run_layout_sweep(o.job, o.gpus, o.tps, o.pps);
  } else {
    if (o.tps.size() != 1 || o.pps.size() != 1) {
      throw ConfigError({"--tp", 0}, "give one --tp and one --pp value (lists need --sweep)");
    }
    o.job.layout.tp = o.tps.front();
    o.job.layout.pp = o.pps.front();
    if (o.dp > 0) {
      o.job.layout.dp = o.dp;
      if (o.gpus > 0 && o.gpus != o.job.layout.gpus()) {
        throw ConfigError({"--gpus", 0}, fmt::format("{} GPUs, but TP x PP x DP = {}", o.gpus,
                                                     o.job.layout.gpus()));
      }
    } else {
      const int tp_pp = o.job.layout.tp * o.job.layout.pp;
      if (o.gpus < 1 || o.gpus % tp_pp != 0) {
        throw ConfigError({"--dp", 0}, fmt::format("give --dp, or --gpus a multiple of TP x PP = "
                                                   "{}",
                                                   tp_pp));
      }
      o.job.layout.dp = o.gpus / tp_pp;
    }
    results.push_back(par::run_train_job(o.job));
  }
  std::string out;  // rendered whole: an error never leaves half an output behind
  if (o.format == "json") {
    json all = json::array();
    for (const par::TrainResult& r : results) all.push_back(par::train_output_json(r));
    out = (o.sweep ? json{{"layouts", all}} : all.front()).dump(2) + "\n";
  } else if (o.format == "csv") {
    out = results_csv(results);
  } else {
    out = o.sweep ? sweep_table(o, results) : one_table(o, results.front());
  }
  std::cout << out;
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  o->job.layout.global_batch = 1536;  // GPT-3 175B's batch in Narayanan et al. SC'21, Table 1
  auto* cmd = app.add_subcommand(
      "train", "Simulate a transformer's iteration under tensor, pipeline and data parallelism "
               "(Megatron-LM, 1F1B), or --sweep every layout of a GPU count");
  cmd->add_option("--topology", o->job.topology, "A shipped machine or a .yaml file")
      ->capture_default_str();
  cmd->add_option("--set", o->job.overrides, "Override a value of the machine: KEY.PATH=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--workload", o->job.workload, "A transformer of the model zoo or a .yaml file")
      ->capture_default_str();
  cmd->add_option("--tp", o->tps, "Tensor-parallel GPUs (a list with --sweep)")->delimiter(',');
  cmd->add_option("--pp", o->pps, "Pipeline stages (a list with --sweep)")->delimiter(',');
  cmd->add_option("--dp", o->dp, "Data-parallel replicas (default: --gpus / (TP x PP))");
  cmd->add_option("--gpus", o->gpus, "GPUs of the job (needed by --sweep)");
  cmd->add_flag("--sweep", o->sweep, "Every valid layout of --gpus (TP and PP from the lists "
                                     "given, else all), fastest first");
  cmd->add_option("--micro-batch", o->job.layout.micro_batch, "Samples per micro-batch (b)")
      ->capture_default_str();
  cmd->add_option("--global-batch", o->job.layout.global_batch, "Samples per iteration (B)")
      ->capture_default_str();
  cmd->add_flag("--zero1", o->job.layout.zero1, "Shard the optimizer state over the replicas");
  cmd->add_flag("--sequence-parallel", o->job.layout.sequence_parallel,
                "Split layer norms and dropouts over the TP GPUs too (Korthikanti et al.)");
  cmd->add_option("--recompute", o->recompute, "Activation recomputation")
      ->check(CLI::IsMember(par::recompute_names()))
      ->capture_default_str();
  cmd->add_option("--precision", o->job.precision,
                  "Precision recipe, as Megatron-LM runs it (workloads/frameworks/megatron-lm.yaml; "
                  "default: the workload's)")
      ->check(CLI::IsMember(wl::precision_recipe_names()));
  cmd->add_option("--protocol", o->job.protocol, "NCCL protocol (auto: as NCCL picks by size)")
      ->check(CLI::IsMember(sim::protocol_choice_names()))
      ->capture_default_str();
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace gpuscale::cli
