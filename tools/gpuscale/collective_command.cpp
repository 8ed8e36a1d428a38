#include "tools/gpuscale/collective_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>

#include "sim/collectives/nccl_tests.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/exchange/exchange_choice.hpp"
#include "sim/experiment/collective_job.hpp"
#include "sim/experiment/collective_run.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay.hpp"
#include "tools/gpuscale/console.hpp"
#include "tools/gpuscale/size_option.hpp"
#include "topologies/core/csv.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::cli {
namespace {

struct CollectiveOptions {
  std::string topology = "dgx1-v100";
  std::vector<std::string> overrides;
  std::string algo = "nccl";
  std::string collective = "allreduce";
  std::vector<int> gpus = {8};
  std::vector<std::string> bytes = {"100MiB"};
  std::string min_bytes, max_bytes;  // -b, -e: empty unless a sweep is asked for
  std::uint64_t step_factor = 2;     // -f
  std::string protocol = "auto";
  std::string format = "table";
};

struct Row {
  std::string topology;
  std::string algo;
  std::string protocol;
  coll::Collective collective = coll::Collective::AllReduce;
  int gpus = 0;
  coll::NcclTestsShape shape;
  double time_s = 0;
  double algbw_Bps = 0;
  double busbw_Bps = 0;
  long activities = 0;
};

// A size option as a whole number of bytes, as nccl-tests casts its parsed sizes to size_t.
std::uint64_t whole_bytes(const std::string& option, const std::string& text) {
  const double bytes = parse_size(option, text);
  if (bytes >= 0x1p62) {
    throw ConfigError({option, 0}, fmt::format("size '{}' is beyond any GPU's memory", text));
  }
  return static_cast<std::uint64_t>(bytes);
}

// The sizes asked for, before nccl-tests' rounding: the -b/-e/-f sweep, else the --bytes list.
std::vector<std::uint64_t> requested_sizes(const CollectiveOptions& o) {
  if (!o.min_bytes.empty()) {
    return coll::nccl_tests_sizes(whole_bytes("-b/--minbytes", o.min_bytes),
                                  whole_bytes("-e/--maxbytes", o.max_bytes), o.step_factor);
  }
  std::vector<std::uint64_t> sizes;
  for (const std::string& text : o.bytes) sizes.push_back(whole_bytes("--bytes", text));
  return sizes;
}

// nccl-tests' conventions (nccl_tests.hpp): algbw = size / time whatever the collective; busbw =
// algbw x the collective's factor, what each link carries, comparable across GPU counts and with
// the links' own bandwidth. A size of 0 (below nccl-tests' rounding) moves nothing in no time.
Row row_of(const CollectiveOptions& o, const sim::CollectiveJob& job,
           const coll::NcclTestsShape& shape, const sim::CollectiveJobResult& r) {
  const double algbw_Bps = r.seconds > 0 ? double(shape.size_B) / r.seconds : 0.0;
  return {.topology = r.topology,
          .algo = o.algo,
          .protocol = r.protocol,
          .collective = job.collective,
          .gpus = job.gpus,
          .shape = shape,
          .time_s = r.seconds,
          .algbw_Bps = algbw_Bps,
          .busbw_Bps = algbw_Bps * coll::bus_bandwidth_factor(job.collective, job.gpus),
          .activities = r.activities};
}

std::vector<Row> simulate_rows(const CollectiveOptions& o) {
  const coll::Collective kind = coll::collective_by_name(o.collective);
  const std::vector<std::uint64_t> sizes = requested_sizes(o);
  std::vector<Row> rows;
  for (int gpus : o.gpus) {
    const std::string slow =
        sim::flow_by_flow_reason(sim::algorithm_of_alias(o.algo), kind, gpus);
    if (!slow.empty()) {
      warning(fmt::format("{} {} on {} GPUs {}", o.algo, o.collective, gpus, slow));
    }
    for (std::uint64_t requested : sizes) {
      const coll::NcclTestsShape shape = coll::nccl_tests_shape(kind, requested, gpus);
      sim::CollectiveJob job{o.topology, o.overrides, o.algo, gpus, double(shape.size_B),
                             o.protocol, kind};
      rows.push_back(row_of(o, job, shape, sim::run_collective_job(job)));
    }
  }
  return rows;
}

nlohmann::ordered_json rows_json(const std::vector<Row>& rows) {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    results.push_back({{"topology", r.topology},
                       {"algo", r.algo},
                       {"collective", coll::to_string(r.collective)},
                       {"gpus", r.gpus},
                       {"protocol", r.protocol},
                       {"size_B", r.shape.size_B},
                       {"count", r.shape.count},
                       {"type", coll::kNcclTestsType},
                       {"redop", coll::nccl_tests_redop(r.collective)},
                       {"root", coll::nccl_tests_root(r.collective)},
                       {"time_s", r.time_s},
                       {"algbw_Bps", r.algbw_Bps},
                       {"busbw_Bps", r.busbw_Bps},
                       {"simulated_activities", r.activities}});
  }
  return {{"results", results}};
}

std::string rows_csv(const std::vector<Row>& rows) {
  std::string out = "topology,algo,collective,gpus,protocol,size_B,count,type,redop,root,time_s,"
                    "algbw_Bps,busbw_Bps\n";
  for (const Row& r : rows) {
    const auto g = [](double v) { return fmt::format("{:.9g}", v); };
    out += csv_record({r.topology, r.algo, coll::to_string(r.collective), std::to_string(r.gpus),
                       r.protocol, std::to_string(r.shape.size_B), std::to_string(r.shape.count),
                       coll::kNcclTestsType, coll::nccl_tests_redop(r.collective),
                       std::to_string(coll::nccl_tests_root(r.collective)), g(r.time_s),
                       g(r.algbw_Bps), g(r.busbw_Bps)});
  }
  return out;
}

// nccl-tests' columns (src/util.cu, writeResultHeader and writeBenchmarkLinePreamble: size,
// count, type, redop, root, time, algbw, busbw, units on a second line), with the GPU count and
// the protocol that ran in front and behind, since both vary from row to row here.
std::string rows_table(const std::vector<Row>& rows) {
  constexpr const char* kLine = "{:>5} {:>13} {:>13} {:>6} {:>6} {:>5} {:>9} {:>11} {:>9} {:>9}\n";
  std::string out = fmt::format(kLine, "gpus", "size", "count", "type", "redop", "root",
                                "protocol", "time", "algbw", "busbw");
  out += fmt::format(kLine, "", "(B)", "(elements)", "", "", "", "", "(us)", "(GB/s)", "(GB/s)");
  for (const Row& r : rows) {
    out += fmt::format(kLine, r.gpus, r.shape.size_B, r.shape.count, coll::kNcclTestsType,
                       coll::nccl_tests_redop(r.collective), coll::nccl_tests_root(r.collective),
                       r.protocol, fmt::format("{:.2f}", r.time_s * 1e6),
                       fmt::format("{:.2f}", r.algbw_Bps / 1e9),
                       fmt::format("{:.2f}", r.busbw_Bps / 1e9));
  }
  return out;
}

std::string table_title(const CollectiveOptions& o, const std::vector<Row>& rows) {
  const coll::Collective kind = rows.front().collective;
  return fmt::format("{}: {} {} (algbw = size / time; busbw = algbw x {}, as nccl-tests; "
                     "GB = 1e9 B)\n\n",
                     rows.front().topology, o.algo, coll::to_string(kind),
                     coll::bus_bandwidth_formula(kind));
}

void run(const CollectiveOptions& o) {
  const std::vector<Row> rows = simulate_rows(o);
  // Rendered whole before printing: an error never leaves half an output behind.
  std::string out;
  if (o.format == "json") {
    out = rows_json(rows).dump(2) + "\n";
  } else if (o.format == "csv") {
    out = rows_csv(rows);
  } else {
    out = table_title(o, rows) + rows_table(rows);
  }
  std::cout << out;
}

void add_size_options(CLI::App& cmd, CollectiveOptions& o) {
  auto* bytes = cmd.add_option("--bytes", o.bytes, "Sizes, comma-separated, as nccl-tests' size "
                                                   "column counts them: 100MiB, 1 GB, 1e8, 1G")
                    ->delimiter(',')
                    ->capture_default_str();
  auto* min = cmd.add_option("-b,--minbytes", o.min_bytes,
                             "Sweep as nccl-tests from this size (8, 64K, 1M, 1G: binary)");
  auto* max = cmd.add_option("-e,--maxbytes", o.max_bytes, "... up to this size");
  auto* factor = cmd.add_option("-f,--stepfactor", o.step_factor,
                                "... multiplying the size by this factor each step")
                     ->check(CLI::Range(std::uint64_t{2}, std::uint64_t{1} << 20))
                     ->capture_default_str();
  min->needs(max)->excludes(bytes);
  max->needs(min)->excludes(bytes);
  factor->needs(min);
}

}  // namespace

void add_collective_command(CLI::App& app) {
  auto o = std::make_shared<CollectiveOptions>();
  auto* cmd = app.add_subcommand("collective", "Simulate one collective alone over a sweep of "
                                               "sizes, printed as nccl-tests prints it");
  cmd->add_option("--topology", o->topology, "A shipped machine or a .yaml file")
      ->capture_default_str();
  cmd->add_option("--algo", o->algo, "Algorithm: a --comm method of `gpuscale run`")
      ->check(CLI::IsMember(sim::comm_alias_names()))
      ->capture_default_str();
  cmd->add_option("--collective", o->collective, "The collective (broadcast and reduce from GPU 0)")
      ->check(CLI::IsMember(coll::collective_names()))
      ->capture_default_str();
  cmd->add_option("--gpus", o->gpus, "GPU counts, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(2, 1 << 16))
      ->capture_default_str();
  add_size_options(*cmd, *o);
  cmd->add_option("--protocol", o->protocol, "NCCL protocol (auto: as NCCL picks by size)")
      ->check(CLI::IsMember(sim::protocol_choice_names()))
      ->capture_default_str();
  cmd->add_option("--set", o->overrides, "Override a value of the machine: KEY.PATH=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace gpuscale::cli
