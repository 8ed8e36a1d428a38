// How calibration's checks summarise relative errors (model - reference) / reference: the
// median and 90th percentile of their magnitudes and the median of their signs.
#pragma once

#include <string>
#include <vector>

#include "topologies/core/distribution.hpp"  // quantile

namespace gpuscale::calib {

struct ErrorStats {
  int n = 0;
  double median_abs = 0;     // of |error|
  double p90_abs = 0;        // of |error|, linear between ranks
  double median_signed = 0;  // > 0: the model is slow
};

ErrorStats error_stats(const std::vector<double>& signed_errors);

// "WHAT  n=...  |rel err| median ...  p90 ...  signed median ...", one line.
std::string format_error_stats(const std::string& what, const ErrorStats& e);

}  // namespace gpuscale::calib
