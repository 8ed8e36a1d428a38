#include "sim/experiment/result_row_codec.hpp"

#include <nlohmann/json.hpp>

namespace gpuscale::sim {

using nlohmann::json;

void to_json(json& j, const IterationSpread& s) {
  j = {{"samples", s.samples},         {"machine_varies", s.machine_varies},
       {"p10_s", s.p10_s},             {"p50_s", s.p50_s},
       {"p90_s", s.p90_s},             {"speedup_p10", s.speedup_p10},
       {"speedup_p50", s.speedup_p50}, {"speedup_p90", s.speedup_p90}};
}

void from_json(const json& j, IterationSpread& s) {
  j.at("samples").get_to(s.samples);
  j.at("machine_varies").get_to(s.machine_varies);
  j.at("p10_s").get_to(s.p10_s);
  j.at("p50_s").get_to(s.p50_s);
  j.at("p90_s").get_to(s.p90_s);
  j.at("speedup_p10").get_to(s.speedup_p10);
  j.at("speedup_p50").get_to(s.speedup_p50);
  j.at("speedup_p90").get_to(s.speedup_p90);
}

void to_json(json& j, const LinkUtilisation& u) { j = {{"max", u.max}, {"mean", u.mean}}; }

void from_json(const json& j, LinkUtilisation& u) {
  j.at("max").get_to(u.max);
  j.at("mean").get_to(u.mean);
}

void to_json(json& j, const LinkUse& u) { j = json::array({u.link, u.forward, u.utilisation}); }

void from_json(const json& j, LinkUse& u) {
  j.at(0).get_to(u.link);
  j.at(1).get_to(u.forward);
  j.at(2).get_to(u.utilisation);
}

void to_json(json& j, const TimelineEvent& e) {
  j = json::array({e.track, e.name, e.category, e.start_s, e.end_s, e.layer, e.algorithm, e.bytes});
}

void from_json(const json& j, TimelineEvent& e) {
  j.at(0).get_to(e.track);
  j.at(1).get_to(e.name);
  j.at(2).get_to(e.category);
  j.at(3).get_to(e.start_s);
  j.at(4).get_to(e.end_s);
  j.at(5).get_to(e.layer);
  j.at(6).get_to(e.algorithm);
  j.at(7).get_to(e.bytes);
}

void to_json(json& j, const Timeline& t) { j = {{"title", t.title}, {"events", t.events}}; }

void from_json(const json& j, Timeline& t) {
  j.at("title").get_to(t.title);
  j.at("events").get_to(t.events);
}

void to_json(json& j, const ResultRow& r) {
  j = {{"topology", r.topology},
       {"workload", r.workload},
       {"comm", r.comm},
       {"scaling", r.scaling},
       {"exchange", r.exchange},
       {"framework", r.framework},
       {"precision", r.precision},
       {"gpus", r.gpus},
       {"batch", r.batch},
       {"accumulate", r.accumulate},
       {"spatial_ways", r.spatial_ways},
       {"iteration_s", r.iteration_s},
       {"epoch_s", r.epoch_s},
       {"speedup", r.speedup},
       {"throughput_img_s", r.throughput_img_s},
       {"unit", r.unit},
       {"setup_s", r.setup_s},
       {"fpbp_s", r.fpbp_s},
       {"wu_s", r.wu_s},
       {"exposed_comm_s", r.exposed_comm_s},
       {"input_wait_s", r.input_wait_s},
       {"overlap_s", r.overlap_s},
       {"rest_s", r.rest_s},
       {"spread", r.spread},
       {"memory_gpu0_gb", r.memory_gpu0_gb},
       {"memory_max_other_gb", r.memory_max_other_gb},
       {"memory_before_training_gb", r.memory_before_training_gb},
       {"gpu_memory_gb", r.gpu_memory_gb},
       {"link_utilisation", r.link_utilisation},
       {"link_uses", r.link_uses},
       {"allreduce_bytes", r.allreduce_bytes},
       {"activities", r.activities},
       {"wall_s", r.wall_s},
       {"timeline", r.timeline}};
}

void from_json(const json& j, ResultRow& r) {
  j.at("topology").get_to(r.topology);
  j.at("workload").get_to(r.workload);
  j.at("comm").get_to(r.comm);
  j.at("scaling").get_to(r.scaling);
  j.at("exchange").get_to(r.exchange);
  j.at("framework").get_to(r.framework);
  j.at("precision").get_to(r.precision);
  j.at("gpus").get_to(r.gpus);
  j.at("batch").get_to(r.batch);
  j.at("accumulate").get_to(r.accumulate);
  j.at("spatial_ways").get_to(r.spatial_ways);
  j.at("iteration_s").get_to(r.iteration_s);
  j.at("epoch_s").get_to(r.epoch_s);
  j.at("speedup").get_to(r.speedup);
  j.at("throughput_img_s").get_to(r.throughput_img_s);
  j.at("unit").get_to(r.unit);
  j.at("setup_s").get_to(r.setup_s);
  j.at("fpbp_s").get_to(r.fpbp_s);
  j.at("wu_s").get_to(r.wu_s);
  j.at("exposed_comm_s").get_to(r.exposed_comm_s);
  j.at("input_wait_s").get_to(r.input_wait_s);
  j.at("overlap_s").get_to(r.overlap_s);
  j.at("rest_s").get_to(r.rest_s);
  j.at("spread").get_to(r.spread);
  j.at("memory_gpu0_gb").get_to(r.memory_gpu0_gb);
  j.at("memory_max_other_gb").get_to(r.memory_max_other_gb);
  j.at("memory_before_training_gb").get_to(r.memory_before_training_gb);
  j.at("gpu_memory_gb").get_to(r.gpu_memory_gb);
  j.at("link_utilisation").get_to(r.link_utilisation);
  j.at("link_uses").get_to(r.link_uses);
  j.at("allreduce_bytes").get_to(r.allreduce_bytes);
  j.at("activities").get_to(r.activities);
  j.at("wall_s").get_to(r.wall_s);
  j.at("timeline").get_to(r.timeline);
}

}  // namespace gpuscale::sim
