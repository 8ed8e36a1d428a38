#include "tools/gpuscale/result_text.hpp"

#include <fmt/format.h>

#include <set>
#include <utility>

namespace gpuscale::cli {

std::string progress_line(int done, int total, const sim::ResultRow& row) {
  return fmt::format("[{}/{}] {} {} {} GPUs batch {}{}: {:.2f} ms per iteration", done, total,
                     row.workload, row.comm, row.gpus, row.batch,
                     row.accumulate > 1 ? fmt::format(" x {}", row.accumulate) : "",
                     row.iteration_s * 1e3);
}

std::string exchange_legend(const std::vector<const sim::ResultRow*>& rows) {
  std::string out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const sim::ResultRow* row : rows) {
    if (seen.emplace(row->comm, row->exchange).second) {
      out += fmt::format("exchange: {} = {}\n", row->comm, row->exchange);
    }
  }
  return out;
}

}  // namespace gpuscale::cli
