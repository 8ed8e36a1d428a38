#include "topologies/core/distribution.hpp"

#include <boost/math/special_functions/erf.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "topologies/core/config_reader.hpp"
#include "topologies/core/error.hpp"

namespace gpuscale {

double Rng::uniform() {
  // The top 53 bits, centred in their interval: (k + 0.5) / 2^53 is never 0 or 1.
  const auto k = static_cast<double>(engine_() >> 11);
  return (k + 0.5) * 0x1p-53;
}

bool Distribution::varies() const {
  switch (kind) {
    case Kind::none: return false;
    case Kind::normal:
    case Kind::exponential: return spread > 0;
    case Kind::empirical: return quantiles.front() != quantiles.back();
  }
  return false;
}

double Distribution::exceeded_by(double q) const {
  switch (kind) {
    case Kind::none: return 1;
    case Kind::normal:
      // The standard normal's upper quantile: P(Z > z) = q for z = sqrt(2) erfc^-1(2q).
      return std::max(0.0, 1 + spread * std::sqrt(2.0) * boost::math::erfc_inv(2 * q));
    case Kind::exponential: return 1 - spread * std::log(q);
    case Kind::empirical: {
      // Linear between the listed quantiles, at probability p = 1 - q.
      const double position = (1 - q) * static_cast<double>(quantiles.size() - 1);
      const auto below = std::min(static_cast<size_t>(position), quantiles.size() - 2);
      const double within = position - static_cast<double>(below);
      return quantiles[below] + within * (quantiles[below + 1] - quantiles[below]);
    }
  }
  return 1;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(pos);
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (pos - static_cast<double>(below));
}

double Distribution::draw_max(Rng& rng, long n) const {
  return exceeded_by(-std::expm1(std::log(rng.uniform()) / static_cast<double>(n)));
}

Distribution read_distribution(const ConfigNode& node, std::string_view what) {
  // The kind first: it decides which other keys the mapping may hold.
  const MapReader any(node, std::string(what),
                      {"distribution", "cv", "mean", "quantiles", "source"});
  const std::string kind =
      read_one_of(any.require("distribution", "normal"), fmt::format("distribution of {}", what),
                  {"normal", "exponential", "empirical"});
  const char* parameter = kind == "normal" ? "cv" : kind == "exponential" ? "mean" : "quantiles";
  const MapReader r(node, std::string(what), {"distribution", parameter, "source"});
  Distribution d;
  d.origin = node.origin();
  d.source = r.string("source", "\"tools/bench/bench_host_noise on a Xeon E5-2698 v4\"");
  if (kind == "normal") {
    d.kind = Distribution::Kind::normal;
    // Beyond kMaxNormalCv a normal factor is negative too often: such a spread is skewed, and
    // belongs in an empirical or exponential distribution.
    d.spread = read_number(r.require("cv", "0.01"), fmt::format("cv of {}", what), 0, kMaxNormalCv);
  } else if (kind == "exponential") {
    d.kind = Distribution::Kind::exponential;
    d.spread = read_number(r.require("mean", "0.02"), fmt::format("mean of {}", what), 0, 10);
  } else {
    d.kind = Distribution::Kind::empirical;
    const ConfigNode& list = r.require("quantiles", "[0.99, 1.0, 1.05]");
    if (!list.is_sequence() || list.items().size() < 2) {
      throw ConfigError(list.origin(),
                        fmt::format("quantiles of {} must be a list of at least two factors, "
                                    "smallest first (e.g. [0.99, 1.0, 1.05])",
                                    what));
    }
    for (const ConfigNode& item : list.items()) {
      const double factor = read_number(item, fmt::format("a quantile of {}", what), 0, 100);
      if (!d.quantiles.empty() && factor < d.quantiles.back()) {
        throw ConfigError(item.origin(),
                          fmt::format("quantiles of {} must not decrease ({} follows {}; list "
                                      "them smallest first)",
                                      what, item.value(), d.quantiles.back()));
      }
      d.quantiles.push_back(factor);
    }
  }
  return d;
}

}  // namespace gpuscale
