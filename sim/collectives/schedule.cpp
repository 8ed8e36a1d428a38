#include "sim/collectives/schedule.hpp"

namespace gpuscale::coll {

const char* to_string(Op::Kind kind) {
  switch (kind) {
    case Op::Kind::Transfer: return "transfer";
    case Op::Kind::Reduce: return "reduce";
    case Op::Kind::Delay: return "delay";
  }
  return "?";
}

}  // namespace gpuscale::coll
