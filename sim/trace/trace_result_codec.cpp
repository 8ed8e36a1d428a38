#include "sim/trace/trace_result_codec.hpp"

#include <nlohmann/json.hpp>

namespace gpuscale::sim {

using nlohmann::json;

void to_json(json& j, const TraceResult& r) {
  j = {{"iteration_s", r.iteration_s},
       {"compute_s", r.compute_s},
       {"communication_s", r.communication_s},
       {"exposed_communication_s", r.exposed_communication_s},
       {"kernels", r.kernels},
       {"collectives", r.collectives},
       {"messages", r.messages},
       {"activities", r.activities}};
}

void from_json(const json& j, TraceResult& r) {
  j.at("iteration_s").get_to(r.iteration_s);
  j.at("compute_s").get_to(r.compute_s);
  j.at("communication_s").get_to(r.communication_s);
  j.at("exposed_communication_s").get_to(r.exposed_communication_s);
  j.at("kernels").get_to(r.kernels);
  j.at("collectives").get_to(r.collectives);
  j.at("messages").get_to(r.messages);
  j.at("activities").get_to(r.activities);
}

void to_json(json& j, const TraceJobResult& r) {
  j = {{"topology", r.topology}, {"gpu", r.gpu}, {"replay", r.replay}, {"wall_s", r.wall_s}};
}

void from_json(const json& j, TraceJobResult& r) {
  j.at("topology").get_to(r.topology);
  j.at("gpu").get_to(r.gpu);
  j.at("replay").get_to(r.replay);
  j.at("wall_s").get_to(r.wall_s);
}

}  // namespace gpuscale::sim
