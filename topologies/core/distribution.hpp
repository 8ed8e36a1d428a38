// Run-to-run variability of a modelled time, as a machine file names it (docs/variability.md): a
// factor that multiplies the time, drawn independently per rank and iteration. Each
// distribution carries the source it was measured or taken from; none is built in.
//
// Draws are reproducible: the same seed gives the same factors on every platform (the engine's
// output sequence is fixed by the C++ standard, and uniforms are taken from its bits here, not
// from a library's distribution objects, whose algorithms the standard leaves open).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/core/config_tree.hpp"

namespace gpuscale {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  // Uniform in (0, 1), never 0 or 1, so every quantile is finite.
  double uniform();

 private:
  std::mt19937_64 engine_;
};

struct Distribution {
  enum class Kind { none, normal, exponential, empirical };
  Kind kind = Kind::none;
  // normal: the coefficient of variation (standard deviation over the mean 1);
  // exponential: the mean of the excess over 1 (the factor is 1 + Exp(mean)).
  double spread = 0;
  std::vector<double> quantiles;  // empirical: factors at probabilities 0, 1/(n-1), ..., 1
  std::string source;
  Origin origin;

  bool varies() const;
  // The factor that a fraction `q` of draws exceed (0 < q < 1). Normal factors below 0, which a
  // coefficient of variation of at most kMaxNormalCv makes rarer than 1 in 2,000, are taken as 0.
  double exceeded_by(double q) const;
  double draw(Rng& rng) const { return exceeded_by(rng.uniform()); }
  // The largest of `n` independent draws, drawn at once: P(max <= x) = F(x)^n, so the maximum
  // exceeds its value with probability 1 - U^(1/n) for a uniform U (computed without the
  // cancellation of 1 - U^(1/n) when n is large).
  double draw_max(Rng& rng, long n) const;
};

inline constexpr double kMaxNormalCv = 0.3;

// The q-quantile of samples (0 <= q <= 1), linear between order statistics; 0 for none.
double quantile(std::vector<double> values, double q);

// `{distribution: normal, cv: 0.01, source: "..."}`, `{distribution: exponential, mean: 0.02,
// source: ...}` or `{distribution: empirical, quantiles: [0.99, 1.0, 1.05], source: ...}`.
// Throws ConfigError naming the line for anything else.
Distribution read_distribution(const ConfigNode& node, std::string_view what);

}  // namespace gpuscale
