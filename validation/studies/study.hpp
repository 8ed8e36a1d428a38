// A study (`gpuscale sweep STUDY.yaml`, docs/sweeps.md): a base experiment and the axes to vary
// around it (machines, workloads, GPU counts, batches, exchange methods, routing, fusion sizes),
// expanded into one run per combination, or into an explicit list of runs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/experiment/experiment.hpp"
#include "topologies/core/config_tree.hpp"

namespace gpuscale::sweep {

// A machine of a study: a shipped name or a .yaml file, or one derived inline (`base:` and the
// keys it changes, resolved when the study is read), with --set style overrides.
struct Machine {
  std::string label;     // what tables and figures call it
  std::string topology;  // the name or path; for an inline machine, its label
  std::vector<std::string> overrides;
  std::shared_ptr<const ConfigNode> document;  // inline machines only
  std::string defined_at;                      // an inline machine's file:line
};

// One run: a single configuration, everything it depends on spelled out.
struct Run {
  Machine machine;
  sim::Experiment experiment;  // settings (routing, fusion, scaling, images, profile, ...)
  sim::Configuration config;   // workload, comm, batch, GPUs
  // The precision recipe it trains at: the experiment's, else its workload's own `precision:`
  // (what rows and figures name; the run's hash reads only the experiment's).
  std::string precision;
};

struct Study {
  std::string name;
  std::string description;
  std::string file;               // where it was read from
  std::vector<std::string> axes;  // the axes whose values differ between runs, in axis_names() order
  std::vector<Run> runs;          // in study order
};

}  // namespace gpuscale::sweep
