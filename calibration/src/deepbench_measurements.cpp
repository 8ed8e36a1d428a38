#include "calibration/src/deepbench_measurements.hpp"

#include <fmt/format.h>

#include <set>

#include "topologies/core/config_reader.hpp"
#include "topologies/core/yaml_scalar.hpp"

namespace gpuscale::calib {
namespace {

// Sizes in DeepBench's tables are whole numbers; a billion is beyond any of them.
constexpr long kMaxSize = 1'000'000'000;

// Where a row's flow mapping continues: under its first key, past "  - {".
constexpr const char* kContinuation = ",\n     ";

std::string timed_call_yaml(const TimedCall& t) {
  std::string out = fmt::format("{{median: {}, spread: {}", format_microseconds(t.median),
                                format_microseconds(t.spread));
  if (!t.algorithm.empty()) out += fmt::format(", algorithm: {}", yaml_scalar(t.algorithm));
  return out + "}";
}

std::string gemm_yaml(const MeasuredGemm& g) {
  const DeepBenchGemm& s = g.shape;
  return fmt::format("  - {{line: {}, m: {}, n: {}, k: {}, a_transposed: {}, b_transposed: {}{}"
                     "time: {}}}\n",
                     s.line, s.m, s.n, s.k, s.a_transposed, s.b_transposed, kContinuation,
                     timed_call_yaml(g.time));
}

std::string conv_yaml(const MeasuredConv& c) {
  const DeepBenchConv& s = c.shape;
  std::string out = fmt::format("  - {{line: {}, w: {}, h: {}, c: {}, n: {}, k: {}, s: {}, r: {}, "
                                "pad_w: {}, pad_h: {}, stride_w: {}, stride_h: {}{}forward: {}",
                                s.line, s.w, s.h, s.c, s.n, s.k, s.s, s.r, s.pad_w, s.pad_h,
                                s.stride_w, s.stride_h, kContinuation, timed_call_yaml(c.forward));
  if (c.backward_data) {
    out += fmt::format("{}backward_data: {}", kContinuation, timed_call_yaml(*c.backward_data));
  }
  return out + fmt::format("{}backward_weights: {}}}\n", kContinuation,
                           timed_call_yaml(c.backward_weights));
}

TimedCall read_timed_call(const ConfigNode& node, const std::string& what) {
  const MapReader r(node, what, {"median", "spread", "algorithm"});
  TimedCall t;
  t.median = read_seconds(r.require("median", "12.5 us"), fmt::format("median of {}", what));
  t.spread = read_seconds(r.require("spread", "0.2 us"), fmt::format("spread of {}", what));
  t.algorithm = r.optional_string("algorithm").value_or("");
  return t;
}

// A row's name in errors: "conv of line 200", once its line can be seen.
std::string row_name(const ConfigNode& node, const char* kind) {
  const ConfigNode* line = node.is_map() ? node.find("line") : nullptr;
  if (line == nullptr || !line->is_scalar()) return kind;
  return fmt::format("{} of line {}", kind, line->value());
}

class MeasuredRow {
 public:
  MeasuredRow(const ConfigNode& node, const char* kind, const std::vector<std::string>& keys,
            std::set<long>& lines)
      : reader_(node, row_name(node, kind), keys) {
    line_ = size("line", 1);
    if (!lines.insert(line_).second) {
      throw ConfigError(node.origin(), fmt::format("DeepBench line {} is measured twice (keep "
                                                   "one)",
                                                   line_));
    }
  }

  long line() const { return line_; }
  const std::string& what() const { return reader_.what(); }
  const MapReader& reader() const { return reader_; }

  long size(const char* key, long min) const {
    return read_integer(reader_.require(key, "1"), fmt::format("{} of {}", key, what()), min,
                        kMaxSize);
  }
  bool flag(const char* key) const {
    return read_bool(reader_.require(key, "false"), fmt::format("{} of {}", key, what()));
  }
  TimedCall call(const char* key) const {
    return read_timed_call(reader_.require(key, "{median: 12.5 us, spread: 0.2 us}"),
                           fmt::format("{} of {}", key, what()));
  }

 private:
  MapReader reader_;
  long line_ = 0;
};

MeasuredGemm read_gemm(const ConfigNode& node, std::set<long>& lines) {
  const MeasuredRow row(node, "gemm",
                      {"line", "m", "n", "k", "a_transposed", "b_transposed", "time"}, lines);
  MeasuredGemm g;
  g.shape.line = static_cast<int>(row.line());
  g.shape.m = row.size("m", 1);
  g.shape.n = row.size("n", 1);
  g.shape.k = row.size("k", 1);
  g.shape.a_transposed = row.flag("a_transposed");
  g.shape.b_transposed = row.flag("b_transposed");
  g.time = row.call("time");
  return g;
}

MeasuredConv read_conv(const ConfigNode& node, std::set<long>& lines) {
  const MeasuredRow row(node, "conv",
                      {"line", "w", "h", "c", "n", "k", "s", "r", "pad_w", "pad_h", "stride_w",
                       "stride_h", "forward", "backward_data", "backward_weights"},
                      lines);
  MeasuredConv c;
  DeepBenchConv& s = c.shape;
  s.line = static_cast<int>(row.line());
  s.w = row.size("w", 1);
  s.h = row.size("h", 1);
  s.c = row.size("c", 1);
  s.n = row.size("n", 1);
  s.k = row.size("k", 1);
  s.s = row.size("s", 1);
  s.r = row.size("r", 1);
  s.pad_w = row.size("pad_w", 0);
  s.pad_h = row.size("pad_h", 0);
  s.stride_w = row.size("stride_w", 1);
  s.stride_h = row.size("stride_h", 1);
  if (s.w + 2 * s.pad_w < s.s || s.h + 2 * s.pad_h < s.r) {
    throw ConfigError(node.origin(), fmt::format("{}: the filter is larger than the padded input "
                                                 "(check w, h, s, r and the pads)",
                                                 row.what()));
  }
  const compute::ConvShape shape = conv_shape(s);
  s.p = shape.out_width();
  s.q = shape.out_height();
  c.forward = row.call("forward");
  if (row.reader().find("backward_data") != nullptr) c.backward_data = row.call("backward_data");
  c.backward_weights = row.call("backward_weights");
  return c;
}

// A list of rows, possibly empty; absent is empty.
const std::vector<ConfigNode>& rows(const MapReader& top, const char* key,
                                    const std::vector<ConfigNode>& none) {
  const ConfigNode* node = top.find(key);
  if (node == nullptr) return none;
  if (!node->is_sequence()) {
    throw ConfigError(node->origin(), fmt::format("'{}' must be a list of measured rows (e.g. "
                                                  "'- {{line: 5, ...}}', or '[]')",
                                                  key));
  }
  return node->items();
}

}  // namespace

std::string deepbench_measurements_to_yaml(const DeepBenchMeasurements& m) {
  std::string out = compute::measurement_header_to_yaml(m.header);
  out += fmt::format("precision: {}\nshapes_file: {}\n", compute::to_string(m.precision),
                     yaml_scalar(m.shapes_file));
  out += m.gemms.empty() ? "gemm: []\n" : "gemm:\n";
  for (const MeasuredGemm& g : m.gemms) out += gemm_yaml(g);
  out += m.convs.empty() ? "conv: []\n" : "conv:\n";
  for (const MeasuredConv& c : m.convs) out += conv_yaml(c);
  return out;
}

DeepBenchMeasurements load_deepbench_measurements(const std::string& path) {
  const ConfigNode doc = ConfigNode::load_file(path);
  std::vector<std::string> keys = compute::measurement_header_keys();
  keys.insert(keys.end(), {"precision", "shapes_file", "gemm", "conv"});
  const MapReader r(doc, "DeepBench measurements", keys);
  DeepBenchMeasurements m;
  m.origin = Origin{path, 0};
  m.header = compute::read_measurement_header(r);
  // DeepBench's two training precisions: FP32, and FP16 inputs with FP32 accumulation.
  m.precision = *compute::precision_from_string(
      read_one_of(r.require("precision", "fp32"), "precision", {"fp32", "tensor"}));
  m.shapes_file = r.string("shapes_file", "results_fp32.csv");
  std::set<long> lines;
  const std::vector<ConfigNode> none;
  for (const ConfigNode& row : rows(r, "gemm", none)) m.gemms.push_back(read_gemm(row, lines));
  for (const ConfigNode& row : rows(r, "conv", none)) m.convs.push_back(read_conv(row, lines));
  if (m.gemms.empty() && m.convs.empty()) {
    throw ConfigError(doc.origin(), "no measured rows (add a 'gemm' or 'conv' list)");
  }
  return m;
}

}  // namespace gpuscale::calib
