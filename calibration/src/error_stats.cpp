#include "calibration/src/error_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscale::calib {

ErrorStats error_stats(const std::vector<double>& signed_errors) {
  std::vector<double> abs_errors;
  for (double e : signed_errors) abs_errors.push_back(std::abs(e));
  return {static_cast<int>(signed_errors.size()), quantile(abs_errors, 0.5),
          quantile(abs_errors, 0.9), quantile(signed_errors, 0.5)};
}

std::string format_error_stats(const std::string& what, const ErrorStats& e) {
  return fmt::format("{:<34} n={:3}  |rel err| median {:.3f}  p90 {:.3f}  signed median {:+.3f}",
                     what, e.n, e.median_abs, e.p90_abs, e.median_signed);
}

}  // namespace gpuscale::calib
