#include "sim/collectives/schedule.hpp"

#include <algorithm>
#include <utility>

namespace gpuscale::coll {

const char* to_string(Op::Kind kind) {
  switch (kind) {
    case Op::Kind::Transfer: return "transfer";
    case Op::Kind::Reduce: return "reduce";
    case Op::Kind::Delay: return "delay";
  }
  return "?";
}

Schedule side_by_side(std::vector<Schedule> schedules) {
  Schedule all;
  if (schedules.empty()) return all;
  all.algorithm = schedules.front().algorithm;
  all.payload_bytes = schedules.front().payload_bytes;
  all.lock_step = true;
  all.ops_start_when_ready = true;
  for (Schedule& s : schedules) {
    const int first_op = static_cast<int>(all.ops.size());
    const int first_pipeline = static_cast<int>(all.pipeline_step_latency_s.size());
    for (Op& op : s.ops) {
      for (int& d : op.deps) d += first_op;
      if (op.pipeline >= 0) op.pipeline += first_pipeline;
      all.ops.push_back(std::move(op));
    }
    all.pipeline_step_latency_s.insert(all.pipeline_step_latency_s.end(),
                                       s.pipeline_step_latency_s.begin(),
                                       s.pipeline_step_latency_s.end());
    all.ranks = std::max(all.ranks, s.ranks);
    all.lock_step = all.lock_step && s.lock_step;
    all.ops_start_when_ready = all.ops_start_when_ready && s.ops_start_when_ready;
  }
  return all;
}

}  // namespace gpuscale::coll
