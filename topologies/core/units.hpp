// Physical quantities with their units, and the parser for "25 GB/s"-style values.
//
// Every value in a gpuscale YAML file carries its unit; a bare number where a unit is expected is
// an error. Internally everything is SI: bytes, seconds, bytes per second, floating-point
// operations per second, hertz. Decimal prefixes are
// powers of ten (1 GB = 1e9 B) and binary prefixes powers of two (1 GiB = 2^30 B); a lower-case
// 'b' means bits (100 Gb/s = 12.5 GB/s).
#pragma once

#include <string>
#include <string_view>

namespace gpuscale {

struct Bytes {
  double value = 0;  // bytes
};

struct Seconds {
  double value = 0;  // seconds
};

struct BytesPerSecond {
  double value = 0;  // bytes per second, per direction
};

struct FlopsPerSecond {
  double value = 0;  // floating-point operations per second (a multiply-add counts as 2)
};

struct Hertz {
  double value = 0;  // cycles per second
};

// Parsers for one quantity. They throw std::invalid_argument with a message that says what is
// wrong and gives an example of a valid value; callers add the file and line.
// Quantities must be finite and >= 0; a zero is accepted (callers that need a positive value
// check it, since "0 us" is a valid latency but not a valid bandwidth). Nonzero values must lie
// within each quantity's limits: 1 byte .. 1 EiB, 1 ps .. a day, 1 B/s .. 1 EB/s,
// 1 FLOP/s .. 1 ZFLOP/s, 1 Hz .. 1 THz.
Bytes parse_bytes(std::string_view text);
inline constexpr double kMaxBytes = 0x1p60;  // 1 EiB: the largest size any input may give
Seconds parse_seconds(std::string_view text);
BytesPerSecond parse_bandwidth(std::string_view text);
FlopsPerSecond parse_flop_rate(std::string_view text);  // "15.7 TFLOP/s" or "125 TFLOPS"
Hertz parse_frequency(std::string_view text);           // "1530 MHz"

// Human-readable forms used in tables ("25 GB/s", "0.3 us", "16 GB", "15.7 TFLOP/s", "1.53 GHz"),
// with up to 4 significant digits.
std::string format_bandwidth(BytesPerSecond bw);
std::string format_seconds(Seconds t);
std::string format_bytes(Bytes b);
std::string format_flop_rate(FlopsPerSecond rate);
std::string format_frequency(Hertz f);

// Fixed forms for files gpuscale writes and reads back (the calibration tool's): one unit and a
// fixed resolution, so a value survives the trip, trailing zeros dropped ("310.125 us", "0 us").
std::string format_microseconds(Seconds t);                  // 1 ns resolution
std::string format_gigabytes_per_second(BytesPerSecond bw);  // 1 MB/s resolution
std::string format_megahertz(Hertz f);                       // 1 kHz resolution
std::string format_mebibytes(Bytes b);                       // 1 byte resolution

}  // namespace gpuscale
