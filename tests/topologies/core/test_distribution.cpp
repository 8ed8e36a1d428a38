// Variability distributions (topologies/core/distribution.hpp): quantiles against closed forms, the
// largest of n draws drawn at once against the expected maximum computed independently, the
// same draws from the same seed, and strict reading.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/test_support.hpp"
#include "topologies/core/config_tree.hpp"
#include "topologies/core/distribution.hpp"

namespace gpuscale {
namespace {

using ::testing::HasSubstr;

Distribution of_kind(Distribution::Kind kind, double spread, std::vector<double> quantiles = {}) {
  Distribution d;
  d.kind = kind;
  d.spread = spread;
  d.quantiles = std::move(quantiles);
  return d;
}
Distribution normal(double cv) { return of_kind(Distribution::Kind::normal, cv); }
Distribution exponential(double mean) { return of_kind(Distribution::Kind::exponential, mean); }

// E[max of n standard normals] = integral of x n phi(x) Phi(x)^(n-1) dx, by the trapezoid rule
// on [-10, 10]: an independent reference for draw_max.
double expected_max_of_standard_normals(int n) {
  const double step = 1e-4;
  double sum = 0;
  for (double x = -10; x <= 10; x += step) {
    const double pdf = std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi);
    const double cdf = 0.5 * std::erfc(-x / std::numbers::sqrt2);
    sum += x * n * pdf * std::pow(cdf, n - 1) * step;
  }
  return sum;
}

double harmonic(int n) {
  double h = 0;
  for (int i = 1; i <= n; ++i) h += 1.0 / i;
  return h;
}

TEST(Distribution, QuantilesFollowTheirClosedForms) {
  const double one_sigma_above = 0.5 * std::erfc(1 / std::numbers::sqrt2);  // P(Z > 1)
  EXPECT_NEAR(normal(0.1).exceeded_by(0.5), 1.0, 1e-12);
  EXPECT_NEAR(normal(0.1).exceeded_by(one_sigma_above), 1.1, 1e-9);
  EXPECT_NEAR(normal(0.1).exceeded_by(1 - one_sigma_above), 0.9, 1e-9);
  EXPECT_NEAR(exponential(0.2).exceeded_by(std::exp(-1.0)), 1.2, 1e-12);
  const Distribution listed = of_kind(Distribution::Kind::empirical, 0, {1, 2, 4});
  EXPECT_DOUBLE_EQ(listed.exceeded_by(0.75), 1.5);  // p = 0.25, halfway from 1 to 2
  EXPECT_DOUBLE_EQ(listed.exceeded_by(0.25), 3.0);  // p = 0.75, halfway from 2 to 4
  EXPECT_DOUBLE_EQ(Distribution{}.exceeded_by(0.01), 1.0);
  EXPECT_FALSE(Distribution{}.varies());
  EXPECT_FALSE(normal(0).varies());
}

TEST(Distribution, TheLargestOfNDrawsHasTheExpectedMaximum) {
  const int draws = 100000;
  for (int n : {1, 2, 8, 64, 512}) {
    Rng rng(7);
    double normal_sum = 0, exponential_sum = 0;
    for (int i = 0; i < draws; ++i) {
      normal_sum += normal(0.1).draw_max(rng, n);
      exponential_sum += exponential(0.1).draw_max(rng, n);
    }
    // Four standard errors or more: the maximum of n >= 1 standard normals has a standard
    // deviation of at most 1, that of n exponentials at most pi / sqrt(6).
    EXPECT_NEAR((normal_sum / draws - 1) / 0.1, expected_max_of_standard_normals(n), 1.5e-2) << n;
    EXPECT_NEAR((exponential_sum / draws - 1) / 0.1, harmonic(n), 2e-2) << n;
  }
}

TEST(Distribution, TheLargestDrawnAtOnceIsTheLargestOfSeparateDraws) {
  Rng at_once(3), one_by_one(4);
  const Distribution d = normal(0.2);
  double sum_at_once = 0, sum_one_by_one = 0;
  const int trials = 50000;
  for (int i = 0; i < trials; ++i) {
    sum_at_once += d.draw_max(at_once, 8);
    double largest = 0;
    for (int r = 0; r < 8; ++r) largest = std::max(largest, d.draw(one_by_one));
    sum_one_by_one += largest;
  }
  EXPECT_NEAR(sum_at_once / trials, sum_one_by_one / trials, 4e-3);
}

TEST(Distribution, TheSameSeedGivesTheSameDraws) {
  Rng a(42), b(42), c(43);
  std::vector<double> from_a, from_b, from_c;
  for (int i = 0; i < 100; ++i) {
    from_a.push_back(normal(0.1).draw(a));
    from_b.push_back(normal(0.1).draw(b));
    from_c.push_back(normal(0.1).draw(c));
  }
  EXPECT_EQ(from_a, from_b);
  EXPECT_NE(from_a, from_c);
}

TEST(Distribution, SampleQuantilesInterpolateBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0.0);
}

std::string read_error(const std::string& yaml) {
  return testing::config_error_of([&] {
    read_distribution(ConfigNode::load_string(yaml, "machine.yaml"), "variability.compute");
  });
}

TEST(Distribution, ReadsEachKindWithItsSource) {
  const Distribution d = read_distribution(
      ConfigNode::load_string("{distribution: empirical, quantiles: [0.99, 1, 1.2], source: bench}",
                              "machine.yaml"),
      "variability.host");
  EXPECT_EQ(d.kind, Distribution::Kind::empirical);
  EXPECT_EQ(d.quantiles, (std::vector<double>{0.99, 1, 1.2}));
  EXPECT_EQ(d.source, "bench");
  EXPECT_TRUE(d.varies());
}

TEST(Distribution, RefusesWhatItCannotDraw) {
  EXPECT_THAT(read_error("{distribution: gamma, cv: 0.1, source: x}"),
              HasSubstr("machine.yaml:1: unknown distribution of variability.compute 'gamma'"));
  EXPECT_THAT(read_error("{distribution: normal, cv: 0.5, source: x}"),
              HasSubstr("cv of variability.compute is 0.5, outside 0..0.3"));
  EXPECT_THAT(read_error("{distribution: normal, cv: 0.1}"), HasSubstr("source"));
  EXPECT_THAT(read_error("{distribution: normal, mean: 0.1, source: x}"), HasSubstr("mean"));
  EXPECT_THAT(read_error("{distribution: exponential, mean: -1, source: x}"),
              HasSubstr("outside 0..10"));
  EXPECT_THAT(read_error("{distribution: empirical, quantiles: [1.1, 1.0], source: x}"),
              HasSubstr("must not decrease"));
  EXPECT_THAT(read_error("{distribution: empirical, quantiles: [1.1], source: x}"),
              HasSubstr("at least two factors"));
  EXPECT_THAT(read_error("{cv: 0.1, source: x}"), HasSubstr("distribution"));
}

}  // namespace
}  // namespace gpuscale
