// Units in values: every quantity parses to SI with its prefix (decimal vs binary, bits vs
// bytes), and anything else (no unit, unknown unit, negative) is rejected with a fix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/core/units.hpp"

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

TEST(Units, FormattingPicksAReadablePrefix) {
  EXPECT_EQ(format_bandwidth({25e9}), "25 GB/s");
  EXPECT_EQ(format_bandwidth({12.5e9}), "12.5 GB/s");
  EXPECT_EQ(format_seconds({0.3e-6}), "300 ns");
  EXPECT_EQ(format_seconds({2.5e-6}), "2.5 us");
  EXPECT_EQ(format_bytes({16e9}), "16 GB");
}

}  // namespace
}  // namespace gpuscale
