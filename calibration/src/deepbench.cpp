#include "calibration/src/deepbench.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "topologies/core/csv.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::calib {
namespace {

enum class Section { none, gemm, conv_header, conv, lstm };

class RowReader {
 public:
  RowReader(const std::vector<std::string>& fields, Origin where)
      : fields_(fields), where_(std::move(where)) {}

  const std::string& text(std::size_t i, std::string_view what) const {
    if (i >= fields_.size() || fields_[i].empty()) {
      throw ConfigError(where_, fmt::format("column {} ({}) is empty", i + 1, what));
    }
    return fields_[i];
  }

  long whole(std::size_t i, std::string_view what) const {
    const std::string& t = text(i, what);
    long v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc{} || end != t.data() + t.size() || v < 0) {
      throw ConfigError(where_, fmt::format("{} '{}' in column {} is not a whole number", what, t,
                                            i + 1));
    }
    return v;
  }

  // A time in milliseconds, > 0.
  Seconds milliseconds(std::size_t i, std::string_view what) const {
    const std::string& t = text(i, what);
    double ms = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), ms);
    if (ec != std::errc{} || end != t.data() + t.size() || !std::isfinite(ms) || ms <= 0) {
      throw ConfigError(where_, fmt::format("{} '{}' in column {} is not a positive time in ms",
                                            what, t, i + 1));
    }
    return {ms * 1e-3};
  }

  bool transpose(std::size_t i, std::string_view what) const {
    const std::string& t = text(i, what);
    if (t == "N" || t == "T") return t == "T";
    throw ConfigError(where_, fmt::format("{} '{}' must be N or T", what, t));
  }

  std::string optional_text(std::size_t i) const { return i < fields_.size() ? fields_[i] : ""; }

 private:
  const std::vector<std::string>& fields_;
  Origin where_;
};

bool is_whole_number(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// Checks that the header's columns at the positions read start with the expected names, so that
// a reordered export fails loudly instead of being misread.
template <std::size_t N>
void expect_header(const std::vector<std::string>& fields,
                   const std::array<std::pair<std::size_t, std::string_view>, N>& columns,
                   const Origin& where) {
  for (const auto& [i, name] : columns) {
    const std::string got = i < fields.size() ? fields[i] : "";
    if (!got.starts_with(name)) {
      throw ConfigError(where, fmt::format("DeepBench header: column {} is '{}', expected '{}' "
                                           "(is this a DeepBench training-results export?)",
                                           i + 1, got, name));
    }
  }
}

constexpr std::array<std::pair<std::size_t, std::string_view>, 7> kGemmHeader{{
    {2, "M"}, {3, "N"}, {4, "K"}, {5, "A Transpose"}, {6, "B Transpose"}, {8, "Time (msec)"},
    {9, "TERAFLOPS"}}};

constexpr std::array<std::pair<std::size_t, std::string_view>, 17> kConvHeader{{
    {2, "W"}, {3, "H"}, {4, "C"}, {5, "N"}, {6, "K"}, {7, "S"}, {8, "R"}, {9, "pad_w"},
    {10, "pad_h"}, {11, "Horizontal stride"}, {12, "Vertical stride"}, {13, "Forward"},
    {14, "wrt Inputs"}, {15, "wrt Parameters"}, {17, "P"}, {18, "Q"}, {23, "Forward Algorithm"}}};

// The header shares its line with the section's title.
constexpr std::array<std::pair<std::size_t, std::string_view>, 6> kLstmHeader{{
    {2, "Hidden Units"}, {3, "N"}, {4, "Timesteps"}, {6, "Time Forward (msec)"},
    {7, "Time Backward wrt Inputs (msec)"}, {8, "Time Backward wrt Weights (msec)"}}};

DeepBenchGemm read_gemm(const RowReader& row, int line) {
  DeepBenchGemm g;
  g.line = line;
  g.application = row.optional_text(1);
  g.m = row.whole(2, "M");
  g.n = row.whole(3, "N");
  g.k = row.whole(4, "K");
  g.a_transposed = row.transpose(5, "A Transpose");
  g.b_transposed = row.transpose(6, "B Transpose");
  g.time = row.milliseconds(8, "time");
  return g;
}

DeepBenchConv read_conv(const RowReader& row, int line, const Origin& where) {
  DeepBenchConv c;
  c.line = line;
  c.application = row.optional_text(1);
  c.w = row.whole(2, "W");
  c.h = row.whole(3, "H");
  c.c = row.whole(4, "C");
  c.n = row.whole(5, "N");
  c.k = row.whole(6, "K");
  c.s = row.whole(7, "S");
  c.r = row.whole(8, "R");
  c.pad_w = row.whole(9, "pad_w");
  c.pad_h = row.whole(10, "pad_h");
  c.stride_w = row.whole(11, "horizontal stride");
  c.stride_h = row.whole(12, "vertical stride");
  c.forward = row.milliseconds(13, "forward time");
  if (row.optional_text(14) != "N/A*") c.backward_data = row.milliseconds(14, "backward-data time");
  c.backward_weights = row.milliseconds(15, "backward-weights time");
  c.p = row.whole(17, "P");
  c.q = row.whole(18, "Q");
  c.forward_algorithm = row.optional_text(23);
  if (c.stride_w < 1 || c.stride_h < 1 || c.w + 2 * c.pad_w < c.s || c.h + 2 * c.pad_h < c.r) {
    throw ConfigError(where, "convolution with no output (check sizes, pads and strides)");
  }
  const long p = (c.w + 2 * c.pad_w - c.s) / c.stride_w + 1;
  const long q = (c.h + 2 * c.pad_h - c.r) / c.stride_h + 1;
  if (p != c.p || q != c.q) {
    throw ConfigError(where, fmt::format("output size {}x{} does not follow from the input, "
                                         "filter, pads and strides ({}x{}): columns shifted?",
                                         c.p, c.q, p, q));
  }
  return c;
}

DeepBenchLstm read_lstm(const RowReader& row, int line) {
  DeepBenchLstm l;
  l.line = line;
  l.application = row.optional_text(1);
  l.hidden = row.whole(2, "hidden units");
  l.n = row.whole(3, "N");
  l.timesteps = row.whole(4, "timesteps");
  l.forward = row.milliseconds(6, "forward time");
  l.backward_data = row.milliseconds(7, "backward-data time");
  l.backward_weights = row.milliseconds(8, "backward-weights time");
  return l;
}

}  // namespace

compute::ConvShape conv_shape(const DeepBenchConv& c) {
  compute::ConvShape s;
  s.batch = c.n;
  s.in_channels = c.c;
  s.in_height = c.h;
  s.in_width = c.w;
  s.out_channels = c.k;
  s.filter_height = c.r;
  s.filter_width = c.s;
  s.pad_height = c.pad_h;
  s.pad_width = c.pad_w;
  s.stride_height = c.stride_h;
  s.stride_width = c.stride_w;
  return s;
}

DeepBenchResults read_deepbench_csv(const std::string& path) {
  std::ifstream in(path);
  if (!std::filesystem::is_regular_file(path) || !in) {
    throw ConfigError(Origin{path, 0}, "no such file (check the path)");
  }
  DeepBenchResults out;
  out.file = path;
  Section section = Section::none;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const Origin where{path, number};
    const std::vector<std::string> fields = split_csv(line);
    const std::string& first = fields[0];
    if (number == 1 && first == "Precision" && fields.size() > 1) out.precision = fields[1];
    if (first.starts_with("Dense Matrix Multiplication")) {
      expect_header(fields, kGemmHeader, where);
      section = Section::gemm;
      continue;
    }
    if (first == "Convolution") {
      section = Section::conv_header;
      continue;
    }
    if (first.starts_with("Recurrent Layers - LSTM")) {
      expect_header(fields, kLstmHeader, where);
      section = Section::lstm;
      continue;
    }
    if (first.starts_with("Recurrent") || first.starts_with("All-Reduce")) {
      section = Section::none;
      continue;
    }
    if (section == Section::conv_header) {
      expect_header(fields, kConvHeader, where);
      section = Section::conv;
      continue;
    }
    if (section == Section::none || fields.size() < 3 || !is_whole_number(fields[2])) continue;
    const RowReader row(fields, where);
    if (section == Section::gemm) out.gemms.push_back(read_gemm(row, number));
    if (section == Section::conv) out.convs.push_back(read_conv(row, number, where));
    if (section == Section::lstm) out.lstms.push_back(read_lstm(row, number));
  }
  if (out.gemms.empty() && out.convs.empty()) {
    throw ConfigError(Origin{path, 0}, "no GEMM or convolution rows found (is this a DeepBench "
                                       "training-results export?)");
  }
  return out;
}

}  // namespace gpuscale::calib
