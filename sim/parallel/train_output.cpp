#include "sim/parallel/train_output.hpp"

namespace gpuscale::par {

nlohmann::json train_output_json(const TrainResult& r) {
  nlohmann::json stages = nlohmann::json::array();
  for (size_t k = 0; k < r.sim.stages.size(); ++k) {
    const StageResult& s = r.sim.stages[k];
    const StageMemory& m = r.memory[k];
    stages.push_back({{"stage", k},
                      {"forward_s", r.stage_times[k].forward_s},
                      {"backward_s", r.stage_times[k].backward_s},
                      {"weight_cast_s", r.stage_times[k].weight_cast_s},
                      {"busy_s", s.busy_s},
                      {"bubble", s.bubble},
                      {"dp_s", s.dp_s},
                      {"end_s", s.end_s},
                      {"memory_bytes", {{"weights", m.weights},
                                        {"gradients", m.gradients},
                                        {"optimizer", m.optimizer},
                                        {"activations", m.activations},
                                        {"total", m.total()}}}});
  }
  const ParallelLayout& l = r.layout;
  return {{"topology", r.topology},
          {"gpu", r.gpu},
          {"precision", r.precision},
          {"precision_runs_as", r.precision_runs_as},
          {"gpus", l.gpus()},
          {"tp", l.tp},
          {"pp", l.pp},
          {"dp", l.dp},
          {"micro_batch", l.micro_batch},
          {"global_batch", l.global_batch},
          {"micro_batches", r.micro_batches},
          {"zero1", l.zero1},
          {"sequence_parallel", l.sequence_parallel},
          {"recompute", to_string(l.recompute)},
          {"iteration_s", r.sim.iteration_s},
          {"pipeline_s", r.sim.pipeline_s},
          {"bubble", r.sim.bubble},
          {"bubble_closed_form", r.bubble_closed_form},
          {"tokens_per_s", r.tokens_per_s},
          {"mfu", r.mfu},
          {"tflops_per_gpu_eq3", r.tflops_per_gpu_eq3},
          {"tp_comm_s", r.tp_comm_s},
          {"tp_allreduce_s", r.sim.tp_allreduce_s},
          {"tp_bytes_per_gpu_per_allreduce", r.sim.tp_bytes_per_gpu},
          {"pp_comm_s", r.pp_comm_s},
          {"pp_transfer_s", r.sim.pp_transfer_s},
          {"dp_comm_s", r.dp_comm_s},
          {"memory_per_gpu_bytes", r.memory_per_gpu},
          {"gpu_memory_bytes", r.gpu_memory},
          {"fits", r.fits},
          {"activities", r.sim.activities},
          {"wall_s", r.wall_s},
          {"stages", stages}};
}

}  // namespace gpuscale::par
