#include "topologies/core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace gpuscale {
namespace {

struct UnitFactor {
  std::string_view symbol;
  double factor;  // multiply the number by this to get the SI value
};

constexpr double kKilo = 1e3, kMega = 1e6, kGiga = 1e9, kTera = 1e12;
constexpr double kKibi = 1024.0, kMebi = kKibi * 1024, kGibi = kMebi * 1024, kTebi = kGibi * 1024;

constexpr std::array kByteUnits{
    UnitFactor{"B", 1},          UnitFactor{"kB", kKilo},     UnitFactor{"KB", kKilo},
    UnitFactor{"MB", kMega},     UnitFactor{"GB", kGiga},     UnitFactor{"TB", kTera},
    UnitFactor{"KiB", kKibi},    UnitFactor{"MiB", kMebi},    UnitFactor{"GiB", kGibi},
    UnitFactor{"TiB", kTebi},
};

constexpr std::array kTimeUnits{
    UnitFactor{"s", 1},     UnitFactor{"ms", 1e-3}, UnitFactor{"us", 1e-6},
    UnitFactor{"µs", 1e-6}, UnitFactor{"ns", 1e-9},
};

constexpr std::array kBandwidthUnits{
    UnitFactor{"B/s", 1},          UnitFactor{"kB/s", kKilo},      UnitFactor{"KB/s", kKilo},
    UnitFactor{"MB/s", kMega},     UnitFactor{"GB/s", kGiga},      UnitFactor{"TB/s", kTera},
    UnitFactor{"KiB/s", kKibi},    UnitFactor{"MiB/s", kMebi},     UnitFactor{"GiB/s", kGibi},
    UnitFactor{"b/s", 1.0 / 8},    UnitFactor{"kb/s", kKilo / 8},  UnitFactor{"Mb/s", kMega / 8},
    UnitFactor{"Gb/s", kGiga / 8}, UnitFactor{"Tb/s", kTera / 8},
};

constexpr double kPeta = 1e15;

// Both spellings in use: "15.7 TFLOP/s" (SI style) and "125 TFLOPS" (NVIDIA datasheets).
constexpr std::array kFlopRateUnits{
    UnitFactor{"FLOP/s", 1},        UnitFactor{"kFLOP/s", kKilo},  UnitFactor{"MFLOP/s", kMega},
    UnitFactor{"GFLOP/s", kGiga},   UnitFactor{"TFLOP/s", kTera},  UnitFactor{"PFLOP/s", kPeta},
    UnitFactor{"FLOPS", 1},         UnitFactor{"kFLOPS", kKilo},   UnitFactor{"MFLOPS", kMega},
    UnitFactor{"GFLOPS", kGiga},    UnitFactor{"TFLOPS", kTera},   UnitFactor{"PFLOPS", kPeta},
};

constexpr std::array kFrequencyUnits{
    UnitFactor{"Hz", 1}, UnitFactor{"kHz", kKilo}, UnitFactor{"MHz", kMega}, UnitFactor{"GHz", kGiga},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <std::size_t N>
std::string unit_list(const std::array<UnitFactor, N>& units) {
  std::string out;
  for (const auto& u : units) {
    if (!out.empty()) out += ", ";
    out += u.symbol;
  }
  return out;
}

// What a quantity may be besides zero: no input of gpuscale's needs less or more, and values
// beyond reach SimGrid as denormals or infinities that abort it (issue 19).
struct Limits {
  std::string_view what;     // "time"
  std::string_view example;  // "0.7 us"
  double smallest;           // the least nonzero value (SI)
  std::string_view smallest_text;
  double largest;            // the greatest value (SI)
  std::string_view largest_text;
};

constexpr Limits kSizeLimits{"size", "16 GB", 1, "one byte", kMaxBytes, "1 EiB"};
constexpr Limits kTimeLimits{"time", "0.7 us", 1e-12, "1 ps", 86400, "a day"};
constexpr Limits kBandwidthLimits{"bandwidth", "25 GB/s", 1, "1 B/s", 1e18, "1 EB/s"};
constexpr Limits kFlopRateLimits{"FLOP rate", "15.7 TFLOP/s", 1, "1 FLOP/s", 1e21,
                                 "1 ZFLOP/s"};
constexpr Limits kFrequencyLimits{"frequency", "1530 MHz", 1, "1 Hz", 1e12, "1 THz"};

// Splits "25 GB/s" into 25 and "GB/s", then applies the unit's factor.
template <std::size_t N>
double parse_quantity(std::string_view text, const std::array<UnitFactor, N>& units,
                      const Limits& limits) {
  const std::string_view what = limits.what, example = limits.example;
  const std::string_view s = trim(text);
  double number = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec == std::errc::result_out_of_range) {
    throw std::invalid_argument(fmt::format("{} '{}' is beyond what a number holds (write e.g. "
                                            "'{}')",
                                            what, text, example));
  }
  if (ec != std::errc{} || end == s.data()) {
    throw std::invalid_argument(
        fmt::format("{} '{}' is not a number with a unit (write e.g. '{}')", what, text, example));
  }
  const std::string_view unit = trim(std::string_view(end, s.data() + s.size() - end));
  if (unit.empty()) {
    throw std::invalid_argument(
        fmt::format("{} '{}' has no unit (write e.g. '{}')", what, text, example));
  }
  for (const auto& u : units) {
    if (u.symbol == unit) {
      const double value = number * u.factor;
      if (!std::isfinite(value)) {
        throw std::invalid_argument(fmt::format("{} '{}' is not finite", what, text));
      }
      if (value < 0) {
        throw std::invalid_argument(
            fmt::format("{} '{}' is negative (write e.g. '{}')", what, text, example));
      }
      if (value > limits.largest) {
        throw std::invalid_argument(fmt::format("{} '{}' is more than {} (write e.g. '{}')", what,
                                                text, limits.largest_text, example));
      }
      if (value > 0 && value < limits.smallest) {
        throw std::invalid_argument(fmt::format("{} '{}' is less than {} (write e.g. '{}')", what,
                                                text, limits.smallest_text, example));
      }
      return value;
    }
  }
  throw std::invalid_argument(fmt::format("{} '{}' has unknown unit '{}' (known: {})", what, text,
                                          unit, unit_list(units)));
}

// Picks the largest prefix that keeps the number >= 1, so tables read "25 GB/s", "300 ns".
template <std::size_t N>
std::string format_with(double value_si, const std::array<UnitFactor, N>& candidates) {
  const UnitFactor* best = &candidates.front();
  for (const auto& u : candidates) {
    if (value_si >= u.factor * (1 - 1e-12)) best = &u;
  }
  return fmt::format("{:.4g} {}", value_si / best->factor, best->symbol);
}

// `value` with `decimals` decimals, trailing zeros and a trailing point dropped, then the unit.
std::string format_fixed(double value, int decimals, std::string_view unit) {
  std::string text = fmt::format("{:.{}f}", value, decimals);
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return fmt::format("{} {}", text, unit);
}

}  // namespace

Bytes parse_bytes(std::string_view text) {
  return Bytes{parse_quantity(text, kByteUnits, kSizeLimits)};
}

Seconds parse_seconds(std::string_view text) {
  return Seconds{parse_quantity(text, kTimeUnits, kTimeLimits)};
}

BytesPerSecond parse_bandwidth(std::string_view text) {
  return BytesPerSecond{parse_quantity(text, kBandwidthUnits, kBandwidthLimits)};
}

FlopsPerSecond parse_flop_rate(std::string_view text) {
  return FlopsPerSecond{parse_quantity(text, kFlopRateUnits, kFlopRateLimits)};
}

Hertz parse_frequency(std::string_view text) {
  return Hertz{parse_quantity(text, kFrequencyUnits, kFrequencyLimits)};
}

std::string format_bandwidth(BytesPerSecond bw) {
  constexpr std::array kShown{UnitFactor{"B/s", 1}, UnitFactor{"kB/s", kKilo},
                              UnitFactor{"MB/s", kMega}, UnitFactor{"GB/s", kGiga},
                              UnitFactor{"TB/s", kTera}};
  return format_with(bw.value, kShown);
}

std::string format_seconds(Seconds t) {
  constexpr std::array kShown{UnitFactor{"ns", 1e-9}, UnitFactor{"us", 1e-6},
                              UnitFactor{"ms", 1e-3}, UnitFactor{"s", 1}};
  return format_with(t.value, kShown);
}

std::string format_bytes(Bytes b) {
  constexpr std::array kShown{UnitFactor{"B", 1}, UnitFactor{"kB", kKilo}, UnitFactor{"MB", kMega},
                              UnitFactor{"GB", kGiga}, UnitFactor{"TB", kTera}};
  return format_with(b.value, kShown);
}

std::string format_flop_rate(FlopsPerSecond rate) {
  constexpr std::array kShown{UnitFactor{"FLOP/s", 1}, UnitFactor{"kFLOP/s", kKilo},
                              UnitFactor{"MFLOP/s", kMega}, UnitFactor{"GFLOP/s", kGiga},
                              UnitFactor{"TFLOP/s", kTera}, UnitFactor{"PFLOP/s", kPeta}};
  return format_with(rate.value, kShown);
}

std::string format_frequency(Hertz f) {
  return format_with(f.value, kFrequencyUnits);
}

std::string format_microseconds(Seconds t) { return format_fixed(t.value * 1e6, 3, "us"); }

std::string format_gigabytes_per_second(BytesPerSecond bw) {
  return format_fixed(bw.value / kGiga, 3, "GB/s");
}

std::string format_megahertz(Hertz f) { return format_fixed(f.value / kMega, 3, "MHz"); }

// 6 decimals of a MiB: about a byte.
std::string format_mebibytes(Bytes b) { return format_fixed(b.value / kMebi, 6, "MiB"); }

}  // namespace gpuscale
