// The JSON API `gpuscale serve` answers (docs/serve.md), apart from HTTP so that it is tested
// without a socket: what the page offers, a shipped machine's link kinds and picture, and a run
// of one configuration over a few GPU counts through the loaders and the simulation `gpuscale
// run` uses. Bad input is a ConfigError whose one-line message names the request's key and what
// to fix, as the CLI's name a file's line.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gpuscale::serve {

// What one request may ask for. A server shared by a class must not be held by one request.
struct Limits {
  int max_gpus = 4096;                     // GPUs of one configuration
  int max_gpu_counts = 8;                  // configurations of one run request
  int max_samples = 64;                    // sampled iterations of one configuration
  std::size_t max_request_bytes = 64 * 1024;
  double max_run_seconds = 60;             // a run past it is ended and reported
  int concurrent_runs = 2;                 // runs answered at once (ApiPool)
};

// A run ended at Limits::max_run_seconds.
class RunTooLong : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// GET /api/catalog: the shipped machines, models, frameworks, exchanges and precisions; the
// configuration the page opens with (the default study's ResNet-50 on the DGX-1,
// tools/experiments/dgx1-study.yaml); the limits.
nlohmann::ordered_json catalog(const Limits& limits);

// GET /api/machine?name=NAME: a shipped machine's description, GPUs, devices (name, kind: what a
// new link may join), link kinds (lane bandwidth in GB/s per direction, latency in µs,
// efficiency), its links (each one's ends, kind, lanes, lane bandwidth and latency: what `set`
// may change, links.N.FIELD) and its picture.
nlohmann::ordered_json machine(const std::string& name);

// POST /api/run, `body` a JSON object (docs/serve.md, "The API"):
//   machine   a shipped machine's name
//   set       what-if changes to it, as `gpuscale run --set` takes them
//             ("link_kinds.nvlink.lane_bandwidth=50 GB/s")
//   links     links changed, added or removed, as a `base:` file's `links:` entries
//             ([{"a": "gpu0", "b": "gpu1", "remove": true}, {"a": "gpu0", "b": "gpu5",
//             "kind": "nvlink", "lanes": 1}]); `set` applies after them
//   variability  the machine's spreads, as a machine file's `variability:` section
//             ({"compute": {"distribution": "normal", "cv": 0.05, "source": "what-if"}})
//   samples, seed  sampled iterations and their seed (`gpuscale run --samples --seed`)
//   workload, framework (""; the workload's own), comm, precision (""; the workload's own)
//   without   mechanisms left out, as `gpuscale run --without` takes them (["input"])
//   gpus      GPU counts, e.g. [1, 2, 4, 8]
//   batch     samples per GPU
// The answer: `results`, the rows `gpuscale run --format json` prints for the same
// configuration; `timeline_svg` and `machine_svg` (the links' heat map) of the most GPUs. The
// simulation runs in a child process, ended (RunTooLong) past Limits::max_run_seconds.
nlohmann::ordered_json run(const std::string& body, const Limits& limits);

// POST /api/train, `body` a JSON object (docs/serve.md, "The API"): `gpuscale train --sweep`.
//   machine, set, links   as a run's
//   workload  a shipped transformer (default gpt3-175b); precision (""; the workload's own)
//   gpus      the GPUs to lay out
//   tp, pp    the tensor- and pipeline-parallel sizes tried (absent: every valid one)
//   micro_batch, global_batch, zero1, sequence_parallel, recompute   as `train` takes them
// The answer: `layouts`, each as `gpuscale train --format json` prints it, fastest first. The
// simulation runs in a child process, ended (RunTooLong) past Limits::max_run_seconds.
nlohmann::ordered_json train(const std::string& body, const Limits& limits);

}  // namespace gpuscale::serve
