// A validation suite: measurements of a real study (validation/NAME/*.yaml), the setup the study
// ran, and its qualitative claims, as plain structs. The files are described in
// docs/validation.md; each metric is defined by its table's `interpretation`.
//
// Names inside a suite are the study's ("LeNet", "P2P"); `networks` and `methods` map them to
// gpuscale's workloads and --comm methods.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/experiment/experiment.hpp"
#include "topologies/core/error.hpp"
#include "topologies/core/shipped_files.hpp"
#include "topologies/core/units.hpp"
#include "validation/src/suite_history.hpp"

namespace gpuscale::validation {

// Another plausible reading of the whole setup, declared with the evidence for it: the study's
// batches read as MXNet's --batch-size, the total over the GPUs; another number of decode
// threads; another allreduce buffer; generated batches or the dataset's; another workload for
// some of the study's networks, another --comm method for some of its methods. Every table and claim is predicted again under it and reported
// beside the headline, never in it. What it leaves empty stays as the setup says.
struct SetupAlternative {
  std::string id;
  std::optional<bool> batch_total{};
  std::optional<int> decode_threads{};
  std::optional<double> fusion_mb{};
  std::optional<bool> synthetic_data{};
  std::map<std::string, std::string> networks{};  // the study's name -> the workload it ran
  std::map<std::string, std::string> methods{};   // the study's name -> its --comm method
  // The study's name -> the framework it ran under (a shipped name or a file).
  std::map<std::string, std::string> frameworks{};
  std::string why{};
  Origin origin{};
};

// Another server of a study that compares servers: its topology, the GPU counts it ran and its
// GPUs' memory, and the networks the suite runs on it (empty: every one). Points, bounds and
// claims name it by the study's name; a run that names none ran on the setup's machine.
struct Machine {
  std::string name;  // the study's ("C4140-B")
  std::string topology;
  std::vector<int> gpus;
  Bytes gpu_memory;
  std::vector<std::string> networks;
  Origin origin;
};

// How the study ran: the machine, the batches, the GPU counts and the images per epoch.
struct Setup {
  std::string topology;
  std::string framework;  // memory-model constants (workloads/frameworks)
  std::vector<int> gpus;
  // Per GPU (per group of GPUs for a spatial method), or in all when batch_total.
  std::vector<int> batches;
  bool batch_total = false;  // batch_per: total (MXNet's --batch-size), split over the GPUs
  std::vector<std::string> datasets;  // each network's workload trains on one of them
  std::string precision;
  long strong_images = 0;        // per epoch, whatever the GPU count
  // `strong_images: dataset`: each network's epoch is its own dataset's samples, whatever the
  // GPU count; strong_images is then unused.
  bool strong_images_per_dataset = false;
  long weak_images_per_gpu = 0;  // per epoch and GPU
  Bytes gpu_memory;              // of each of the machine's GPUs
  bool synthetic_data = false;   // the runs fed generated batches: no input pipeline to model
  std::optional<int> decode_threads;  // the runs' decode threads; empty: the framework's
  // The allreduce methods' buffer (Horovod's fusion buffer, DDP's bucket cap); 0: one allreduce
  // per tensor as soon as it is ready; empty: the framework's.
  std::optional<double> fusion_mb;
  std::vector<SetupAlternative> alternatives;
  std::vector<Machine> machines;  // the study's other servers
  Origin origin;

  // The machine named `name` ("": the setup's own, as a Machine).
  Machine machine(const std::string& name) const;
  // The setup's own machine, then the study's other servers.
  std::vector<Machine> all_machines() const;

  // This setup read as `reading` says.
  Setup read_as(const SetupAlternative& reading) const {
    Setup s = *this;
    if (reading.batch_total) s.batch_total = *reading.batch_total;
    if (reading.decode_threads) s.decode_threads = reading.decode_threads;
    if (reading.fusion_mb) s.fusion_mb = reading.fusion_mb;
    if (reading.synthetic_data) s.synthetic_data = *reading.synthetic_data;
    return s;
  }
};

enum class Metric {
  Speedup,
  OverheadPct,
  ImagesPerS,
  MemoryPretrainGb,
  MemoryGpu0Gb,
  MemoryGpuxGb,
  EpochMin,          // the epoch in minutes
  GainPct,           // 100 x (epoch on relative_to_machine / epoch on the run's machine - 1)
  PrecisionSpeedup,  // epoch of the network's twin in the other precision / its own epoch
};
const char* to_string(Metric metric);  // the name a table's `metric` gives it

// A run of the study that a table reports on, by the study's names.
struct StudyRun {
  std::string id;  // "lenet-speedup/LeNet/P2P/2gpu/b16"
  std::string network, method;
  int gpus = 1;
  int batch = 1;
  sim::Scaling scaling = sim::Scaling::Strong;
  std::string machine;  // the study's name of the server; "": the setup's
  Origin origin;
};

// A measured value of a run.
struct Point : StudyRun {
  double measured = 0;
  bool suspect = false;  // shown, but left out of the MAPE
  std::string note;
};

// A run whose metric the study gives only as a limit ("<1.5x"), or a range ("0%-25%").
struct Bound : StudyRun {
  std::optional<double> below, above;  // strict limits; at least one is given
  bool holds(double predicted) const {
    return (!below || predicted < *below) && (!above || predicted > *above);
  }
};

// Another plausible reading of a table's points, declared with the evidence for it: every point
// predicted as the mean of its metric over `gpus` instead of at its own GPU count. Its error is
// reported beside the table's, never in a headline.
struct AlternativeReading {
  std::string id;
  std::vector<int> gpus;
  std::string why;
  Origin origin;
};

struct Table {
  std::string id;
  std::string title;
  Metric metric = Metric::Speedup;
  std::string relative_to;  // OverheadPct: the method the overhead is measured against
  std::string relative_to_machine;  // GainPct: the server the gain is measured against
  std::vector<Point> points;
  std::vector<Bound> bounds;
  std::vector<AlternativeReading> alternatives;
};

// The parameters of every claim kind in one struct; a kind reads the fields its form names
// (claims.hpp). A singular key fills its list with one item (`batch: 16` -> batches {16}).
struct ClaimParams {
  std::vector<std::string> networks;     // networks, network
  std::vector<std::string> methods;      // methods, method
  std::vector<std::string> better_than;  // networks
  std::string like;                      // a network
  std::string faster, slower;            // methods
  std::vector<int> gpus, to_gpus, batches;
  int from_gpus = 1;
  std::vector<std::pair<int, int>> steps;  // (G, G')
  std::string quantity;                    // epoch_time | speedup
  std::string over;                        // batch | gpus
  std::optional<double> within_pct;        // null: report the value, no verdict
  double margin_pct = 0;                   // faster: by more than this, else a tie
  bool decreasing = true;
  bool strict = false;
  std::optional<double> at_least;          // for every G
  std::map<int, double> at_least_by_gpus;  // or per G
  double at_most = 0;
  double at_most_pct = 0, at_least_pct = 0;
  std::vector<std::string> columns;  // pretrain | gpu0 | gpux
  int largest_trainable_batch = 0, first_failing_batch = 0;
  Bytes gpu_memory;
  // method_speedup: `methods` (one) against `baseline`, each training a global mini-batch of
  // samples per iteration; the GPUs sharing a sample of each (the suite's methods say), from
  // which the GPU counts follow.
  std::string baseline;
  std::vector<int> mini_batches;
  int from_mini_batch = 0, to_mini_batch = 0;
  int method_spatial = 1, baseline_spatial = 1;
  bool fits = true;  // fits_memory
  // The server the claim is about and, for machine_gain, the ones it is compared with ("": the
  // setup's machine).
  std::string machine;
  std::vector<std::string> baseline_machines;
  std::string largest;  // precision_speedup: the network whose speedup is the largest
  std::optional<double> above_pct;  // scaling_efficiency, message_sizes: strictly above this
  std::optional<double> max_at_least_pct;  // machine_gain: the largest gain reaches this
  // message_sizes: the range of sizes (lo, hi], bytes.
  std::pair<double, double> message_sizes{0, 0};
};

struct ClaimForm;  // claims.hpp

struct Claim {
  std::string id;
  std::string kind;
  std::string text;
  const ClaimForm* form = nullptr;  // null for not_checked
  ClaimParams params;
  std::string why_not_checked;
  Origin origin;
};

// A study's name for a method or network and gpuscale's (`P2P` -> `p2p`, `ResNet` -> `resnet-50`).
struct NameMapping {
  std::string study;
  std::string gpuscale;
  Origin origin;
  // A method's GPUs sharing each sample (sim::Experiment::spatial); 1: sample parallelism.
  int spatial = 1;
  // The study's methods and the batches a network ran with; empty: every one of the suite.
  std::vector<std::string> methods;
  std::vector<int> batches;
  // The framework a network ran under (a shipped name or a file); empty: the setup's.
  std::string framework;
  // The precision a network trained at; empty: the setup's.
  std::string precision;
  // The input pipeline a network read its data with (sim::Experiment::input_pipeline: "dali"
  // for a study's --use-dali), written at `input_pipeline_at`; empty: the framework's own.
  std::string input_pipeline;
  Origin input_pipeline_at;
  // Whether a network's batches are totals split over the GPUs (`batch_per: total`, a fixed
  // global batch: NCF's 1,048,576); empty: as the setup says.
  std::optional<bool> batch_total;
  // The study's network that is this one in another precision (precision_speedup divides its
  // epoch by this one's); empty: none.
  std::string twin_of;
};

struct Suite {
  std::string name;
  std::string title;
  Setup setup;
  std::vector<NameMapping> methods;   // to --comm methods, in file order
  std::vector<NameMapping> networks;  // to workloads, in file order
  std::vector<Table> tables;
  std::vector<Claim> claims;
  SuiteHistory history;  // its first look and whether it is a development suite

  const std::string& comm_of(const std::string& method) const;
  const NameMapping& network_mapping(const std::string& network) const;
  const std::string& workload_of(const std::string& network) const;
  // The framework `network` ran under: its own, or the setup's.
  const std::string& framework_of(const std::string& network) const;
  // Whether `network`'s batches are totals over the GPUs: its own batch_per, or the setup's.
  bool batch_total_of(const std::string& network) const;
  // The precision `network` trained at: its own, or the setup's.
  const std::string& precision_of(const std::string& network) const;
  // The network that is `network` in another precision (whose twin_of names it); null if none.
  const std::string* find_twin(const std::string& network) const;
  // The same; throws std::logic_error if none is (the loader checks that a precision_speedup
  // has one).
  const std::string& twin(const std::string& network) const;
  int spatial_of(const std::string& method) const;
  // The suite's methods and batches that `network` ran with, in the suite's order.
  std::vector<std::string> methods_of(const std::string& network) const;
  std::vector<int> batches_of(const std::string& network) const;
  // This suite with its setup, networks and methods read as `reading` says.
  Suite read_as(const SetupAlternative& reading) const;
};

// The shipped suites: validation/NAME/suite.yaml, or $GPUSCALE_VALIDATION_DIR/NAME/suite.yaml.
const ShippedFolder& shipped_suites();

// The suite.yaml that `name_or_path` names (a shipped suite name, a suite folder or the file);
// throws ConfigError for an unknown name or a missing file.
std::string suite_yaml(const std::string& name_or_path);

// What a suite's points are, as its suite.yaml's `kind:` says: runs of `gpuscale run` (no kind),
// `gpuscale train` layouts (train_suite.hpp) or a profiler's layer times (layers_suite.hpp).
enum class SuiteKind { study, train, layers };
SuiteKind suite_kind(const std::string& name_or_path);

// `name_or_path`: a shipped suite name, a suite folder or its suite.yaml. Throws ConfigError with
// the file and line for unknown keys, malformed values and names the suite does not define.
Suite load_suite(const std::string& name_or_path);

}  // namespace gpuscale::validation
