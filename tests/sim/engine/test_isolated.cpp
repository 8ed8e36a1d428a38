// A typed run in a child process (isolated.hpp's run_isolated_as): the value comes back decoded,
// and a failure in the child comes back as it does for run_isolated: a ConfigError with the same
// one-line message, anything else as std::runtime_error.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine/isolated.hpp"
#include "tests/support/test_support.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale::sim {
namespace {

TEST(Isolated, ATypedResultComesBackFromTheChild) {
  EXPECT_EQ(testing::bits_of(run_isolated_as([] { return 1.0 / 3; })),
            testing::bits_of(1.0 / 3));
  EXPECT_EQ(run_isolated_as([] { return std::vector<std::string>{"a", "b"}; }),
            (std::vector<std::string>{"a", "b"}));
}

TEST(Isolated, AConfigErrorInTheChildComesBackWithItsMessage) {
  const std::string message = testing::config_error_of([] {
    run_isolated_as([]() -> double { throw ConfigError({"x.yaml", 12}, "bad value: use 3"); });
  });
  EXPECT_EQ(message, ConfigError({"x.yaml", 12}, "bad value: use 3").what());
}

TEST(Isolated, AnyOtherFailureComesBackAsARuntimeError) {
  try {
    run_isolated_as([]() -> int { throw std::logic_error("our bug"); });
    FAIL() << "no exception";
  } catch (const ConfigError&) {
    FAIL() << "a ConfigError";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "our bug");
  }
}

}  // namespace
}  // namespace gpuscale::sim
