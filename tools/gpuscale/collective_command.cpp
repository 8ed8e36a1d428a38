#include "tools/gpuscale/collective_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

#include "sim/replay/collective_job.hpp"
#include "sim/replay/protocol_choice.hpp"
#include "sim/replay/replay.hpp"
#include "tools/gpuscale/size_option.hpp"

namespace gpuscale::cli {
namespace {

struct CollectiveOptions {
  std::string topology = "dgx1-v100";
  std::vector<std::string> overrides;
  std::string algo = "nccl";
  std::vector<int> gpus = {8};
  std::vector<std::string> bytes = {"100MiB"};
  std::string protocol = "auto";
  std::string format = "table";
};

struct Row {
  std::string topology;
  std::string algo;
  std::string protocol;
  int gpus = 0;
  double bytes = 0;
  double time_s = 0;
  double algbw_Bps = 0;
  double busbw_Bps = 0;
  long activities = 0;
};

// nccl-tests' conventions (its doc/PERFORMANCE.md): algbw = S / t; an allreduce's bus bandwidth,
// busbw = algbw x 2(n-1)/n, is what each link of a ring carries, so it compares across GPU counts
// and with the links' own bandwidth.
Row row_of(const CollectiveOptions& o, int gpus, double bytes, const sim::CollectiveJobResult& r) {
  const double algbw_Bps = bytes / r.seconds;
  return {.topology = r.topology,
          .algo = o.algo,
          .protocol = r.protocol,
          .gpus = gpus,
          .bytes = bytes,
          .time_s = r.seconds,
          .algbw_Bps = algbw_Bps,
          .busbw_Bps = algbw_Bps * (2.0 * (gpus - 1) / gpus),
          .activities = r.activities};
}

nlohmann::ordered_json rows_json(const std::vector<Row>& rows) {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    results.push_back({{"topology", r.topology},
                       {"algo", r.algo},
                       {"collective", "allreduce"},
                       {"gpus", r.gpus},
                       {"bytes", r.bytes},
                       {"protocol", r.protocol},
                       {"time_s", r.time_s},
                       {"algbw_Bps", r.algbw_Bps},
                       {"busbw_Bps", r.busbw_Bps},
                       {"simulated_activities", r.activities}});
  }
  return {{"results", results}};
}

std::string rows_csv(const std::vector<Row>& rows) {
  std::string out = "topology,algo,collective,gpus,bytes,protocol,time_s,algbw_Bps,busbw_Bps\n";
  for (const Row& r : rows) {
    out += fmt::format("{},{},allreduce,{},{:.0f},{},{:.9g},{:.9g},{:.9g}\n", r.topology, r.algo,
                       r.gpus, r.bytes, r.protocol, r.time_s, r.algbw_Bps, r.busbw_Bps);
  }
  return out;
}

std::string rows_table(const std::vector<Row>& rows) {
  std::string out = fmt::format("{:>5} {:>14} {:>9} {:>12} {:>11} {:>11}\n", "gpus", "bytes",
                                "protocol", "time us", "algbw GB/s", "busbw GB/s");
  for (const Row& r : rows) {
    out += fmt::format("{:>5} {:>14.0f} {:>9} {:>12.2f} {:>11.2f} {:>11.2f}\n", r.gpus, r.bytes,
                       r.protocol, r.time_s * 1e6, r.algbw_Bps / 1e9, r.busbw_Bps / 1e9);
  }
  return out;
}

void run(const CollectiveOptions& o) {
  std::vector<double> sizes;
  for (const std::string& text : o.bytes) sizes.push_back(parse_size("--bytes", text));
  std::vector<Row> rows;
  for (int gpus : o.gpus) {
    for (double bytes : sizes) {
      const sim::CollectiveJob job{o.topology, o.overrides, o.algo, gpus, bytes, o.protocol};
      rows.push_back(row_of(o, gpus, bytes, sim::run_collective_job(job)));
    }
  }
  // Rendered whole before printing: an error never leaves half an output behind.
  std::string out;
  if (o.format == "json") {
    out = rows_json(rows).dump(2) + "\n";
  } else if (o.format == "csv") {
    out = rows_csv(rows);
  } else {
    out = fmt::format("{}: {} allreduce (algbw = bytes / time; busbw = algbw x 2(n-1)/n, as "
                      "nccl-tests; GB = 1e9 B)\n\n",
                      rows.front().topology, o.algo);
    out += rows_table(rows);
  }
  std::cout << out;
}

}  // namespace

void add_collective_command(CLI::App& app) {
  auto o = std::make_shared<CollectiveOptions>();
  auto* cmd = app.add_subcommand("collective", "Simulate one allreduce alone: time, algbw and "
                                               "busbw as nccl-tests prints them");
  cmd->add_option("--topology", o->topology, "A shipped machine or a .yaml file")
      ->capture_default_str();
  cmd->add_option("--algo", o->algo, "Allreduce algorithm: a --comm method of `gpuscale run`")
      ->check(CLI::IsMember(sim::comm_method_names()))
      ->capture_default_str();
  cmd->add_option("--gpus", o->gpus, "GPU counts, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(2, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--bytes", o->bytes, "Message sizes per GPU, comma-separated: 100MiB, 1 GB, "
                                       "1e8 (bytes)")
      ->delimiter(',')
      ->capture_default_str();
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
