#include "sim/experiment/collective_result_codec.hpp"

#include <nlohmann/json.hpp>

namespace gpuscale::sim {

using nlohmann::json;

void to_json(json& j, const CollectiveJobResult& r) {
  j = {{"topology", r.topology},
       {"protocol", r.protocol},
       {"seconds", r.seconds},
       {"activities", r.activities}};
}

void from_json(const json& j, CollectiveJobResult& r) {
  j.at("topology").get_to(r.topology);
  j.at("protocol").get_to(r.protocol);
  j.at("seconds").get_to(r.seconds);
  j.at("activities").get_to(r.activities);
}

}  // namespace gpuscale::sim
