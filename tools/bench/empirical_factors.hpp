// A benchmark's timed runs as the empirical distribution a machine file's `variability:` entries
// take (docs/variability.md): each run's factor over the median run, listed at equally spaced
// probabilities from 0 to 1. Shared by bench_host_noise and bench_decode --batch-jitter.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "topologies/core/distribution.hpp"

namespace gpuscale::bench {

// Each time over the median time, in increasing order.
inline std::vector<double> factors_over_median(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  const double median = quantile(seconds, 0.5);
  for (double& t : seconds) t /= median;
  return seconds;
}

// "0.9812, 0.9905, ..., 3.0412": `count` quantiles of `factors`, at probabilities i / (count - 1).
inline std::string quantile_list(const std::vector<double>& factors, int count) {
  std::string list;
  for (int i = 0; i < count; ++i) {
    list += fmt::format("{}{:.4f}", i == 0 ? "" : ", ",
                        quantile(factors, static_cast<double>(i) / (count - 1)));
  }
  return list;
}

// The percentiles a benchmark prints: "p1 0.9812  p10 ...  max 3.0412".
inline std::string factor_percentiles(const std::vector<double>& factors) {
  return fmt::format("p1 {:.4f}  p10 {:.4f}  p90 {:.4f}  p99 {:.4f}  p99.9 {:.4f}  max {:.4f}",
                     quantile(factors, 0.01), quantile(factors, 0.1), quantile(factors, 0.9),
                     quantile(factors, 0.99), quantile(factors, 0.999), factors.back());
}

}  // namespace gpuscale::bench
