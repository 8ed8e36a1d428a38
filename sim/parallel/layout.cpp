#include "sim/parallel/layout.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "topologies/core/error.hpp"

namespace gpuscale::par {

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}

std::vector<std::string> recompute_names() { return {"none", "selective", "full"}; }

Recompute recompute_by_name(const std::string& name) {
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    if (name == to_string(r)) return r;
  }
  throw ConfigError({"--recompute", 0}, fmt::format("unknown mode '{}' (known: {})", name,
                                                    fmt::join(recompute_names(), ", ")));
}

std::string ParallelLayout::str() const {
  return fmt::format("TP {} PP {} DP {} b {} B {}", tp, pp, dp, micro_batch, global_batch);
}

void check_layout(const ParallelLayout& l, const TransformerShape& shape, int gpus_per_node) {
  const auto fail = [](const char* option, const std::string& what) {
    throw ConfigError({option, 0}, what);
  };
  for (const auto& [option, value] :
       {std::pair{"--tp", l.tp}, {"--pp", l.pp}, {"--dp", l.dp}, {"--micro-batch", l.micro_batch},
        {"--global-batch", l.global_batch}}) {
    if (value < 1) fail(option, fmt::format("must be at least 1, not {}", value));
  }
  if (shape.heads % l.tp != 0) {
    fail("--tp", fmt::format("{} does not divide the model's {} attention heads (Megatron splits "
                             "heads over the tensor-parallel GPUs)",
                             l.tp, shape.heads));
  }
  if (l.tp > gpus_per_node) {
    fail("--tp", fmt::format("{} is more than the {} GPUs of a node (tensor parallelism stays on a "
                             "node's NVLink)",
                             l.tp, gpus_per_node));
  }
  if (shape.layers % l.pp != 0) {
    fail("--pp", fmt::format("{} does not divide the model's {} transformer layers", l.pp,
                             shape.layers));
  }
  if (l.global_batch % (l.micro_batch * l.dp) != 0) {
    fail("--global-batch",
         fmt::format("{} is not a multiple of micro-batch x DP = {} x {} = {}", l.global_batch,
                     l.micro_batch, l.dp, l.micro_batch * l.dp));
  }
}

double bubble_fraction(int pp, int micro_batches) {
  return static_cast<double>(pp - 1) / (micro_batches + pp - 1);
}

double model_flops_per_iteration(const TransformerShape& shape, int global_batch) {
  const double B = global_batch, s = static_cast<double>(shape.sequence),
               L = shape.layers, h = static_cast<double>(shape.hidden),
               V = static_cast<double>(shape.vocab);
  return 72 * B * s * L * h * h * (1 + s / (6 * h)) + 6 * B * s * h * V;
}

double narayanan_flops_per_iteration(const TransformerShape& shape, int global_batch) {
  const double B = global_batch, s = static_cast<double>(shape.sequence),
               L = shape.layers, h = static_cast<double>(shape.hidden),
               V = static_cast<double>(shape.vocab);
  return 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
}

std::vector<ParallelLayout> valid_layouts(const ParallelLayout& base, int gpus,
                                          const std::vector<int>& tps, const std::vector<int>& pps,
                                          const TransformerShape& shape, int gpus_per_node) {
  const auto allowed = [](const std::vector<int>& list, int v) {
    return list.empty() || std::ranges::find(list, v) != list.end();
  };
  std::vector<ParallelLayout> layouts;
  for (int t = 1; t <= std::min(gpus, gpus_per_node); ++t) {
    if (gpus % t != 0 || !allowed(tps, t)) continue;
    for (int p = 1; p <= gpus / t; ++p) {
      if ((gpus / t) % p != 0 || !allowed(pps, p)) continue;
      ParallelLayout l = base;
      l.tp = t;
      l.pp = p;
      l.dp = gpus / (t * p);
      try {
        check_layout(l, shape, gpus_per_node);
      } catch (const ConfigError&) {
        continue;
      }
      layouts.push_back(l);
    }
  }
  return layouts;
}

}  // namespace gpuscale::par
