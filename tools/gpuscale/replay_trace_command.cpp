#include "tools/gpuscale/replay_trace_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "sim/collectives/registry.hpp"
#include "sim/exchange/exchange_choice.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/trace/trace_job.hpp"
#include "topologies/core/csv.hpp"
#include "topologies/core/error.hpp"
#include "workloads/interop/astra_sim_text.hpp"
#include "workloads/interop/chakra_trace.hpp"

namespace gpuscale::cli {
namespace {

using nlohmann::json;

struct ReplayTraceOptions {
  std::string astra_sim;      // an ASTRA-sim 1.0 text workload
  std::string chakra;         // a Chakra trace's prefix (PREFIX.0.et, ...)
  std::string export_chakra;  // where to write the iteration as a Chakra trace
  sim::TraceJob job;
  std::string format = "table";
};

struct Loaded {
  interop::TraceGraph graph;
  std::string kind;  // "ASTRA-sim DATA workload", "Chakra trace"
};

Loaded load(const ReplayTraceOptions& o) {
  if (o.astra_sim.empty() == o.chakra.empty()) {
    throw ConfigError({"--astra-sim", 0}, "give one of --astra-sim FILE and --chakra PREFIX");
  }
  if (!o.astra_sim.empty()) {
    const interop::AstraSimWorkload w = interop::load_astra_sim_workload(o.astra_sim);
    return {interop::astra_sim_iteration(w),
            fmt::format("ASTRA-sim {} workload, {} layers", w.parallelism, w.layers.size())};
  }
  return {interop::read_chakra_trace(o.chakra), "Chakra trace, rank 0"};
}

json result_json(const ReplayTraceOptions& o, const Loaded& in, const sim::TraceJobResult& r) {
  const sim::TraceResult& t = r.replay;
  return {{"input", in.graph.source},
          {"format", o.astra_sim.empty() ? "chakra" : "astra-sim"},
          {"topology", r.topology},
          {"gpu", r.gpu},
          {"gpus", o.job.gpus},
          {"comm", o.job.comm},
          {"protocol", o.job.protocol},
          {"iteration_s", t.iteration_s},
          {"compute_s", t.compute_s},
          {"communication_s", t.communication_s},
          {"exposed_communication_s", t.exposed_communication_s},
          {"kernels", t.kernels},
          {"collectives", t.collectives},
          {"messages", t.messages},
          {"activities", t.activities},
          {"wall_s", r.wall_s}};
}

std::string table(const ReplayTraceOptions& o, const Loaded& in, const sim::TraceJobResult& r) {
  const sim::TraceResult& t = r.replay;
  std::string out = fmt::format("{} ({}) on {} ({} x {}), comm {}, protocol {}\n\n",
                                in.graph.source, in.kind, r.topology, o.job.gpus, r.gpu,
                                o.job.comm, o.job.protocol);
  const auto line = [&](const std::string& name, const std::string& value) {
    out += fmt::format("{:<34} {}\n", name, value);
  };
  const auto ms = [](double s) { return fmt::format("{:.3f} ms", s * 1e3); };
  line("iteration", ms(t.iteration_s));
  line("compute (rank 0's GPU busy)", ms(t.compute_s));
  line("communication (any under way)", ms(t.communication_s));
  line("exposed communication", fmt::format("{} ({:.1f} % of the iteration)",
                                            ms(t.exposed_communication_s),
                                            100 * t.exposed_communication_s / t.iteration_s));
  line("kernels, collectives, messages", fmt::format("{}, {}, {}", t.kernels, t.collectives,
                                                     t.messages));
  line("simulated in", fmt::format("{:.2f} s host time ({} activities)", r.wall_s, t.activities));
  return out;
}

std::string csv(const ReplayTraceOptions& o, const Loaded& in, const sim::TraceJobResult& r) {
  const sim::TraceResult& t = r.replay;
  const auto g = [](double v) { return fmt::format("{:.9g}", v); };
  return "input,topology,gpu,gpus,comm,protocol,iteration_s,compute_s,communication_s,"
         "exposed_communication_s,kernels,collectives,messages\n" +
         csv_record({in.graph.source, r.topology, r.gpu, std::to_string(o.job.gpus), o.job.comm,
                     o.job.protocol, g(t.iteration_s), g(t.compute_s), g(t.communication_s),
                     g(t.exposed_communication_s), std::to_string(t.kernels),
                     std::to_string(t.collectives), std::to_string(t.messages)});
}

void run(const ReplayTraceOptions& o) {
  if (o.job.gpus < 1) {
    throw ConfigError({"--gpus", 0}, fmt::format("{} GPUs: give 1 or more", o.job.gpus));
  }
  const Loaded in = load(o);
  const sim::TraceJobResult r = sim::run_trace_job(in.graph, o.job);
  if (!o.export_chakra.empty()) interop::write_chakra_trace(in.graph, o.export_chakra, o.job.gpus);
  std::string out;  // rendered whole: an error never leaves half an output behind
  if (o.format == "json") {
    out = result_json(o, in, r).dump(2) + "\n";
  } else if (o.format == "csv") {
    out = csv(o, in, r);
  } else {
    out = table(o, in, r);
    if (!o.export_chakra.empty()) {
      out += fmt::format("{:<34} {}.0.et .. {}.{}.et\n", "written", o.export_chakra,
                         o.export_chakra, o.job.gpus - 1);
    }
  }
  std::cout << out;
}

}  // namespace

void add_replay_trace_command(CLI::App& app) {
  auto o = std::make_shared<ReplayTraceOptions>();
  auto* cmd = app.add_subcommand(
      "replay-trace", "Replay an ASTRA-sim 1.0 workload or a Chakra trace on a machine: iteration, "
                      "compute, exposed communication; or write it as a Chakra trace");
  cmd->add_option("--astra-sim", o->astra_sim, "An ASTRA-sim 1.0 text workload (DATA or MICRO)");
  cmd->add_option("--chakra", o->chakra, "A Chakra trace: PREFIX of PREFIX.0.et, PREFIX.1.et, ...");
  cmd->add_option("--topology", o->job.topology, "A shipped machine or a .yaml file")
      ->capture_default_str();
  cmd->add_option("--set", o->job.topology_overrides,
                  "Override a value of the machine: KEY.PATH=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--gpus", o->job.gpus, "GPUs of the job, every one running the iteration")
      ->capture_default_str();
  cmd->add_option("--comm", o->job.comm, "Collective algorithm (a --comm method of `gpuscale run`)")
      ->check(CLI::IsMember(sim::comm_alias_names()))
      ->capture_default_str();
  cmd->add_option("--protocol", o->job.protocol, "NCCL protocol (auto: as NCCL picks by size)")
      ->check(CLI::IsMember(sim::protocol_choice_names()))
      ->capture_default_str();
  cmd->add_option("--export-chakra", o->export_chakra,
                  "Also write the iteration as a Chakra trace, PREFIX.RANK.et for each GPU");
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace gpuscale::cli
