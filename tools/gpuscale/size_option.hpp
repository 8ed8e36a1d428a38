// A message size given on the command line (`--bytes`), as `gpuscale collective` and
// `gpuscale topo route` take it.
#pragma once

#include <string>

namespace gpuscale::cli {

// "100MiB", "1 GB" (units.hpp), or a bare number of bytes ("1e8"), as nccl-tests' -b takes.
// Throws ConfigError naming `option` unless the size is a positive, finite number of bytes.
double parse_size(const std::string& option, const std::string& text);

}  // namespace gpuscale::cli
