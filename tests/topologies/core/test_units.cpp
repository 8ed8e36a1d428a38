// Units in values: every quantity parses to SI with its prefix (decimal vs binary, bits vs
// bytes), and anything else (no unit, unknown unit, negative) is rejected with a fix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "topologies/core/units.hpp"

namespace gpuscale {
namespace {

using ::testing::HasSubstr;

TEST(Units, BandwidthPrefixesAreDecimalAndBitsAreEighths) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("25 GB/s").value, 25e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("0.985 GB/s").value, 0.985e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("100 Gb/s").value, 12.5e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1 GiB/s").value, 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("64GB/s").value, 64e9);
}

TEST(Units, TimesAndSizes) {
  EXPECT_DOUBLE_EQ(parse_seconds("0.3 us").value, 0.3e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("100 ns").value, 100e-9);
  EXPECT_DOUBLE_EQ(parse_seconds("2 µs").value, 2e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("5 ms").value, 5e-3);
  EXPECT_DOUBLE_EQ(parse_bytes("16 GB").value, 16e9);
  EXPECT_DOUBLE_EQ(parse_bytes("16 GiB").value, 16.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse_bytes("64 MB").value, 64e6);
}

TEST(Units, BareNumberIsRejectedWithAnExample) {
  try {
    parse_bandwidth("25");
    FAIL() << "a bare number was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("has no unit"));
    EXPECT_THAT(e.what(), HasSubstr("25 GB/s"));
  }
}

TEST(Units, UnknownUnitNegativeAndGarbageAreRejected) {
  EXPECT_THROW(parse_bandwidth("25 GB"), std::invalid_argument);   // a size, not a rate
  EXPECT_THROW(parse_seconds("3 fortnights"), std::invalid_argument);
  EXPECT_THROW(parse_bandwidth("-5 GB/s"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("lots"), std::invalid_argument);
  EXPECT_THROW(parse_seconds(""), std::invalid_argument);
}

// Values no input needs, which would reach SimGrid as denormals or overflow what is built on them.
TEST(Units, NonzeroValuesMustLieWithinEachQuantitysLimits) {
  const auto message = [](auto parse) -> std::string {
    try {
      parse();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "<accepted>";
  };
  EXPECT_THAT(message([] { parse_seconds("1e300 s"); }), HasSubstr("'1e300 s' is more than a day"));
  EXPECT_THAT(message([] { parse_bandwidth("1e-310 GB/s"); }), HasSubstr("is less than 1 B/s"));
  EXPECT_THAT(message([] { parse_bytes("1e-300 GB"); }), HasSubstr("is less than one byte"));
  EXPECT_THAT(message([] { parse_bytes("1e400 B"); }), HasSubstr("is beyond what a number holds"));
  EXPECT_THAT(message([] { parse_frequency("2e12 Hz"); }), HasSubstr("is more than 1 THz"));
  EXPECT_DOUBLE_EQ(parse_seconds("0 us").value, 0);  // zero stays valid: callers decide
  EXPECT_DOUBLE_EQ(parse_seconds("86400 s").value, 86400);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1 B/s").value, 1);
}

TEST(Units, FormattingPicksAReadablePrefix) {
  EXPECT_EQ(format_bandwidth({25e9}), "25 GB/s");
  EXPECT_EQ(format_bandwidth({12.5e9}), "12.5 GB/s");
  EXPECT_EQ(format_seconds({0.3e-6}), "300 ns");
  EXPECT_EQ(format_seconds({2.5e-6}), "2.5 us");
  EXPECT_EQ(format_bytes({16e9}), "16 GB");
}

TEST(Units, FlopRatesTakeBothSpellings) {
  EXPECT_DOUBLE_EQ(parse_flop_rate("15.7 TFLOP/s").value, 15.7e12);
  EXPECT_DOUBLE_EQ(parse_flop_rate("125 TFLOPS").value, 125e12);
  EXPECT_DOUBLE_EQ(parse_flop_rate("989.4 TFLOPS").value, 989.4e12);
  EXPECT_DOUBLE_EQ(parse_flop_rate("1.98 PFLOP/s").value, 1.98e15);
  EXPECT_DOUBLE_EQ(parse_flop_rate("500 GFLOP/s").value, 500e9);
  EXPECT_DOUBLE_EQ(parse_frequency("1530 MHz").value, 1530e6);
  EXPECT_DOUBLE_EQ(parse_frequency("1.98 GHz").value, 1.98e9);
}

TEST(Units, FlopRateWithoutUnitOrWithAWrongOneIsRejected) {
  try {
    parse_flop_rate("15.7");
    FAIL() << "a bare number was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("has no unit"));
    EXPECT_THAT(e.what(), HasSubstr("15.7 TFLOP/s"));
  }
  EXPECT_THROW(parse_flop_rate("15.7 TB/s"), std::invalid_argument);
  EXPECT_THROW(parse_flop_rate("-1 TFLOPS"), std::invalid_argument);
  EXPECT_THROW(parse_frequency("1530"), std::invalid_argument);
}

TEST(Units, FlopRateAndFrequencyFormatting) {
  EXPECT_EQ(format_flop_rate({15.7e12}), "15.7 TFLOP/s");
  EXPECT_EQ(format_flop_rate({989.4e12}), "989.4 TFLOP/s");
  EXPECT_EQ(format_flop_rate({1.979e15}), "1.979 PFLOP/s");
  EXPECT_EQ(format_frequency({1530e6}), "1.53 GHz");
}

}  // namespace
}  // namespace gpuscale
