#include "sim/parallel/train_result_codec.hpp"

#include <nlohmann/json.hpp>

namespace gpuscale::par {

using nlohmann::json;

void to_json(json& j, const ParallelLayout& l) {
  j = {{"tp", l.tp},
       {"pp", l.pp},
       {"dp", l.dp},
       {"micro_batch", l.micro_batch},
       {"global_batch", l.global_batch},
       {"zero1", l.zero1},
       {"sequence_parallel", l.sequence_parallel},
       {"recompute", to_string(l.recompute)}};
}

void from_json(const json& j, ParallelLayout& l) {
  j.at("tp").get_to(l.tp);
  j.at("pp").get_to(l.pp);
  j.at("dp").get_to(l.dp);
  j.at("micro_batch").get_to(l.micro_batch);
  j.at("global_batch").get_to(l.global_batch);
  j.at("zero1").get_to(l.zero1);
  j.at("sequence_parallel").get_to(l.sequence_parallel);
  l.recompute = recompute_by_name(j.at("recompute").get<std::string>());
}

void to_json(json& j, const StageResult& s) {
  j = {{"busy_s", s.busy_s},
       {"bubble", s.bubble},
       {"last_backward_s", s.last_backward_s},
       {"dp_s", s.dp_s},
       {"end_s", s.end_s}};
}

void from_json(const json& j, StageResult& s) {
  j.at("busy_s").get_to(s.busy_s);
  j.at("bubble").get_to(s.bubble);
  j.at("last_backward_s").get_to(s.last_backward_s);
  j.at("dp_s").get_to(s.dp_s);
  j.at("end_s").get_to(s.end_s);
}

void to_json(json& j, const PipelineResult& r) {
  j = {{"iteration_s", r.iteration_s},
       {"pipeline_s", r.pipeline_s},
       {"bubble", r.bubble},
       {"tp_allreduce_s", r.tp_allreduce_s},
       {"tp_bytes_per_gpu", r.tp_bytes_per_gpu},
       {"pp_transfer_s", r.pp_transfer_s},
       {"stages", r.stages},
       {"activities", r.activities}};
}

void from_json(const json& j, PipelineResult& r) {
  j.at("iteration_s").get_to(r.iteration_s);
  j.at("pipeline_s").get_to(r.pipeline_s);
  j.at("bubble").get_to(r.bubble);
  j.at("tp_allreduce_s").get_to(r.tp_allreduce_s);
  j.at("tp_bytes_per_gpu").get_to(r.tp_bytes_per_gpu);
  j.at("pp_transfer_s").get_to(r.pp_transfer_s);
  j.at("stages").get_to(r.stages);
  j.at("activities").get_to(r.activities);
}

void to_json(json& j, const StageTimes& t) {
  j = {{"forward_s", t.forward_s}, {"backward_s", t.backward_s}, {"weight_cast_s", t.weight_cast_s}};
}

void from_json(const json& j, StageTimes& t) {
  j.at("forward_s").get_to(t.forward_s);
  j.at("backward_s").get_to(t.backward_s);
  j.at("weight_cast_s").get_to(t.weight_cast_s);
}

void to_json(json& j, const StageMemory& m) {
  j = {{"params_per_gpu", m.params_per_gpu},
       {"weights", m.weights},
       {"gradients", m.gradients},
       {"optimizer", m.optimizer},
       {"activations", m.activations},
       {"micro_batches_in_flight", m.micro_batches_in_flight}};
}

void from_json(const json& j, StageMemory& m) {
  j.at("params_per_gpu").get_to(m.params_per_gpu);
  j.at("weights").get_to(m.weights);
  j.at("gradients").get_to(m.gradients);
  j.at("optimizer").get_to(m.optimizer);
  j.at("activations").get_to(m.activations);
  j.at("micro_batches_in_flight").get_to(m.micro_batches_in_flight);
}

void to_json(json& j, const TrainResult& t) {
  j = {{"topology", t.topology},
       {"gpu", t.gpu},
       {"precision", t.precision},
       {"precision_runs_as", t.precision_runs_as},
       {"layout", t.layout},
       {"micro_batches", t.micro_batches},
       {"sim", t.sim},
       {"stage_times", t.stage_times},
       {"bubble_closed_form", t.bubble_closed_form},
       {"memory", t.memory},
       {"memory_per_gpu", t.memory_per_gpu},
       {"gpu_memory", t.gpu_memory},
       {"fits", t.fits},
       {"tokens_per_s", t.tokens_per_s},
       {"mfu", t.mfu},
       {"tflops_per_gpu_eq3", t.tflops_per_gpu_eq3},
       {"tp_comm_s", t.tp_comm_s},
       {"pp_comm_s", t.pp_comm_s},
       {"dp_comm_s", t.dp_comm_s},
       {"wall_s", t.wall_s}};
}

void from_json(const json& j, TrainResult& t) {
  j.at("topology").get_to(t.topology);
  j.at("gpu").get_to(t.gpu);
  j.at("precision").get_to(t.precision);
  j.at("precision_runs_as").get_to(t.precision_runs_as);
  j.at("layout").get_to(t.layout);
  j.at("micro_batches").get_to(t.micro_batches);
  j.at("sim").get_to(t.sim);
  j.at("stage_times").get_to(t.stage_times);
  j.at("bubble_closed_form").get_to(t.bubble_closed_form);
  j.at("memory").get_to(t.memory);
  j.at("memory_per_gpu").get_to(t.memory_per_gpu);
  j.at("gpu_memory").get_to(t.gpu_memory);
  j.at("fits").get_to(t.fits);
  j.at("tokens_per_s").get_to(t.tokens_per_s);
  j.at("mfu").get_to(t.mfu);
  j.at("tflops_per_gpu_eq3").get_to(t.tflops_per_gpu_eq3);
  j.at("tp_comm_s").get_to(t.tp_comm_s);
  j.at("pp_comm_s").get_to(t.pp_comm_s);
  j.at("dp_comm_s").get_to(t.dp_comm_s);
  j.at("wall_s").get_to(t.wall_s);
}

}  // namespace gpuscale::par
