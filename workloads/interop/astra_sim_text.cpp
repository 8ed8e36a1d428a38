#include "workloads/interop/astra_sim_text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "topologies/core/error.hpp"

namespace gpuscale::interop {
namespace {

constexpr int kLayerFields = 12;

// A line split at whitespace, with its number.
struct Line {
  int number = 0;
  std::vector<std::string> tokens;
};

// The non-blank lines of the file.
std::vector<Line> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw ConfigError({path, 0}, "cannot read this ASTRA-sim workload (check the path)");
  }
  std::vector<Line> lines;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    Line line{number, {}};
    std::istringstream words(text);
    for (std::string word; words >> word;) line.tokens.push_back(word);
    if (!line.tokens.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

template <class Int>
Int whole_number(const std::string& token, const Origin& where, const std::string& what) {
  Int value{};
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (error != std::errc() || end != token.data() + token.size()) {
    throw ConfigError(where, fmt::format("{}: '{}' is not a whole number", what, token));
  }
  return value;
}

std::optional<wl::Collective> comm_type(const std::string& token, const Origin& where,
                                          const std::string& what) {
  if (token == "NONE") return std::nullopt;
  if (token == "ALLREDUCE") return wl::Collective::AllReduce;
  if (token == "ALLGATHER") return wl::Collective::AllGather;
  if (token == "REDUCESCATTER") return wl::Collective::ReduceScatter;
  if (token == "ALLTOALL") return wl::Collective::AllToAll;
  throw ConfigError(where, fmt::format("{}: unknown comm type '{}' (known: NONE, ALLREDUCE, "
                                       "ALLGATHER, REDUCESCATTER, ALLTOALL)",
                                       what, token));
}

AstraSimLayer parse_layer(const Line& line, const std::string& path) {
  const Origin where{path, line.number};
  if (line.tokens.size() != kLayerFields) {
    throw ConfigError(where, fmt::format("{} fields, expected {}: name reserved fwd_compute "
                                         "fwd_comm_type fwd_comm_size ig_compute ig_comm_type "
                                         "ig_comm_size wg_compute wg_comm_type wg_comm_size "
                                         "wg_update",
                                         line.tokens.size(), kLayerFields));
  }
  const std::vector<std::string>& t = line.tokens;
  AstraSimLayer layer;
  layer.name = t[0];
  layer.line = line.number;
  const std::string of = fmt::format(" of layer '{}'", layer.name);
  whole_number<long>(t[1], where, "reserved" + of);
  const auto cycles = [&](size_t i, const char* field) {
    const auto value = whole_number<uint64_t>(t[i], where, field + of);
    if (static_cast<double>(value) * kAstraSimCycle_s > kMaxTraceSeconds) {
      throw ConfigError(where, fmt::format("{}{}: {} cycles is more than a day (a cycle is a "
                                           "nanosecond)",
                                           field, of, value));
    }
    return value;
  };
  const auto comm = [&](size_t i, const char* type_field, const char* size_field) {
    const std::optional<wl::Collective> kind = comm_type(t[i], where, type_field + of);
    const auto bytes = whole_number<uint64_t>(t[i + 1], where, size_field + of);
    if (static_cast<double>(bytes) > kMaxTraceBytes) {
      throw ConfigError(where, fmt::format("{}{}: {} bytes is more than 1 EiB", size_field, of,
                                           bytes));
    }
    return AstraSimComm{kind, bytes};
  };
  layer.fwd_cycles = cycles(2, "fwd_compute");
  layer.fwd_comm = comm(3, "fwd_comm_type", "fwd_comm_size");
  layer.ig_cycles = cycles(5, "ig_compute");
  layer.ig_comm = comm(6, "ig_comm_type", "ig_comm_size");
  layer.wg_cycles = cycles(8, "wg_compute");
  layer.wg_comm = comm(9, "wg_comm_type", "wg_comm_size");
  layer.wg_update_cycles = cycles(11, "wg_update");
  return layer;
}

}  // namespace

AstraSimWorkload load_astra_sim_workload(const std::string& path) {
  const std::vector<Line> lines = read_lines(path);
  if (lines.empty()) {
    throw ConfigError({path, 1}, "empty ASTRA-sim workload (expected the parallelism, e.g. DATA)");
  }
  AstraSimWorkload w;
  w.path = path;
  const Line& first = lines[0];
  w.parallelism = first.tokens[0];
  if (w.parallelism != "DATA" && w.parallelism != "MICRO") {
    throw ConfigError({path, first.number},
                      fmt::format("parallelism '{}' is not replayed (gpuscale replays DATA and "
                                  "MICRO workloads; for tensor and pipeline parallelism use "
                                  "`gpuscale train`)",
                                  w.parallelism));
  }
  if (first.tokens.size() > 1) {
    throw ConfigError({path, first.number}, fmt::format("unexpected '{}' after {} (a {} workload "
                                                        "has nothing else on its first line)",
                                                        first.tokens[1], w.parallelism,
                                                        w.parallelism));
  }
  if (lines.size() < 2) {
    throw ConfigError({path, first.number + 1}, "missing the number of layers");
  }
  const Line& count_line = lines[1];
  const Origin count_at{path, count_line.number};
  if (count_line.tokens.size() != 1) {
    throw ConfigError(count_at, "expected the number of layers alone on its line");
  }
  const int count = whole_number<int>(count_line.tokens[0], count_at, "number of layers");
  if (count < 1) throw ConfigError(count_at, "number of layers: at least 1");
  const size_t given = lines.size() - 2;
  if (given != static_cast<size_t>(count)) {
    const int at = given < static_cast<size_t>(count) ? lines.back().number + 1
                                                      : lines[2 + static_cast<size_t>(count)].number;
    throw ConfigError({path, at}, fmt::format("{} layers given, line {} says {} (fix the count "
                                              "or the layers)",
                                              given, count_line.number, count));
  }
  for (size_t i = 2; i < lines.size(); ++i) w.layers.push_back(parse_layer(lines[i], path));
  return w;
}

TraceGraph astra_sim_iteration(const AstraSimWorkload& workload) {
  TraceGraph g;
  g.source = workload.path;
  const auto add = [&](TraceNode node) {
    g.nodes.push_back(std::move(node));
    return static_cast<int>(g.nodes.size()) - 1;
  };
  const auto kernels = [&](const AstraSimLayer& l, const char* pass, uint64_t cycles,
                           std::vector<int> deps) {
    return add({TraceNode::Kind::Compute, fmt::format("{} {}", l.name, pass),
                static_cast<double>(cycles) * kAstraSimCycle_s, {}, 0, 0, std::move(deps)});
  };
  // The weight-gradient collective and the update that follows it, after `ready`.
  const auto exchange = [&](const AstraSimLayer& l, std::vector<int> ready) {
    if (!l.wg_comm.kind) return;
    const int c = add({TraceNode::Kind::Collective,
                       fmt::format("{} wg {}", l.name, wl::to_string(*l.wg_comm.kind)), 0,
                       *l.wg_comm.kind, static_cast<double>(l.wg_comm.bytes), 0, std::move(ready)});
    add({TraceNode::Kind::Delay, l.name + " update",
         static_cast<double>(l.wg_update_cycles) * kAstraSimCycle_s, {}, 0, 0, {c}});
  };
  if (workload.parallelism == "MICRO") {
    for (const AstraSimLayer& l : workload.layers) exchange(l, {});
    return g;
  }
  int previous = -1;
  for (const AstraSimLayer& l : workload.layers) {
    previous = kernels(l, "fwd", l.fwd_cycles, previous < 0 ? std::vector<int>{}
                                                             : std::vector<int>{previous});
  }
  for (size_t i = workload.layers.size(); i-- > 0;) {
    const AstraSimLayer& l = workload.layers[i];
    const int wg = kernels(l, "wg", l.wg_cycles, {previous});
    exchange(l, {wg});
    previous = i > 0 ? kernels(l, "ig", l.ig_cycles, {wg}) : wg;
  }
  return g;
}

}  // namespace gpuscale::interop
