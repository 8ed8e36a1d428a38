#include "sim/collectives/schedule_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace gpuscale::coll {
namespace {

bool in_range(int rank, int ranks) { return rank >= 0 && rank < ranks; }

}  // namespace

double critical_path_s(const Schedule& schedule, const UniformCost& cost) {
  std::vector<double> finish(schedule.ops.size(), 0.0);
  double end = 0;
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const Op& op = schedule.ops[i];
    double start = 0;
    for (int dep : op.deps) start = std::max(start, finish[dep]);
    double duration = 0;
    switch (op.kind) {
      case Op::Kind::Transfer:
        duration = op.latency_steps * cost.alpha_s + op.bytes / cost.bandwidth_Bps;
        break;
      case Op::Kind::Reduce: duration = op.bytes / cost.reduce_bandwidth_Bps; break;
      case Op::Kind::Delay: duration = op.seconds; break;
    }
    finish[i] = start + duration;
    end = std::max(end, finish[i]);
  }
  return end;
}

void validate(const Schedule& s) {
  auto fail = [&](std::size_t i, const std::string& what) {
    throw std::logic_error(fmt::format("schedule '{}' ({} ranks): op {} ({}): {}", s.algorithm,
                                       s.ranks, i, to_string(s.ops[i].kind), what));
  };
  if (s.ranks < 1) throw std::logic_error(fmt::format("schedule '{}': ranks < 1", s.algorithm));
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const Op& op = s.ops[i];
    int previous = -1;
    for (int dep : op.deps) {
      if (dep < 0 || dep >= static_cast<int>(i)) {
        fail(i, fmt::format("dep {} is not an earlier op", dep));
      }
      if (dep <= previous) fail(i, fmt::format("deps not increasing at {}", dep));
      previous = dep;
    }
    if (!std::isfinite(op.bytes) || op.bytes < 0) fail(i, fmt::format("bytes {}", op.bytes));
    if (!std::isfinite(op.seconds) || op.seconds < 0) {
      fail(i, fmt::format("seconds {}", op.seconds));
    }
    switch (op.kind) {
      case Op::Kind::Transfer:
        if (!in_range(op.src, s.ranks) || !in_range(op.dst, s.ranks)) {
          fail(i, fmt::format("ranks {} -> {} outside 0..{}", op.src, op.dst, s.ranks - 1));
        }
        if (op.src == op.dst) fail(i, fmt::format("transfer from rank {} to itself", op.src));
        if (op.latency_steps < 0) fail(i, fmt::format("latency_steps {}", op.latency_steps));
        if (op.pipeline < -1 || op.pipeline >= static_cast<int>(s.pipeline_step_latency_s.size())) {
          fail(i, fmt::format("pipeline {} of {}", op.pipeline, s.pipeline_step_latency_s.size()));
        }
        break;
      case Op::Kind::Reduce:
        if (!in_range(op.src, s.ranks)) {
          fail(i, fmt::format("rank {} outside 0..{}", op.src, s.ranks - 1));
        }
        break;
      case Op::Kind::Delay: break;
    }
  }
}

}  // namespace gpuscale::coll
