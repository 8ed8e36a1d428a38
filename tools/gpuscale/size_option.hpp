// A message size given on the command line (`--bytes`, `-b`, `-e`), as `gpuscale collective` and
// `gpuscale topo route` take it.
#pragma once

#include <string>

namespace gpuscale::cli {

// "100MiB", "1 GB" (units.hpp: GB is 1e9 bytes), a bare number of bytes ("1e8"), or a number and
// one letter as nccl-tests' -b and -e take it, binary: "8", "64K", "128M", "1G" (2^30 bytes).
// Throws ConfigError naming `option` unless the size is a positive, finite number of bytes.
double parse_size(const std::string& option, const std::string& text);

}  // namespace gpuscale::cli
