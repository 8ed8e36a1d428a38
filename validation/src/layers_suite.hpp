// A validation suite of per-layer times (`kind: layers` in its suite.yaml): a profiler's rows,
// one per timed module of a model and pass, compared with `gpuscale workload layers`'
// predictions for the same model, batch, GPU and framework (sim/experiment/layer_times.hpp).
//
// A third, small kind of suite beside suite.hpp's runs and train_suite.hpp's layouts: its points
// are layers of one GPU, not runs of a machine. What a row measures is the profiler's, not
// gpuscale's: the suite states the profiler's protocol, and the prediction follows it:
//   - which of our layer types its rows are (a module class each: "Conv2d: conv");
//   - that a layer of any other type (a residual add, a concat, the loss) is no timed module:
//     its kernels run between two timed modules and the next timed module of the same pass
//     waits for them before it stops its clock;
//   - which wrapped modules the data leaves out (their time is nobody's row);
//   - the host's cost of timing one module per pass, as a sum of the framework's host costs;
//   - whether the first module's forward also waits for the input batch's copy (not scored).
// The rows are paired with the layers in forward order, type by type, and each pair's output and
// parameter bytes must agree: a pairing slip is a load error, not a prediction error.
// gpuscale fits nothing on these suites: every row is held out.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topologies/core/error.hpp"
#include "validation/src/suite_history.hpp"

namespace gpuscale::validation {

// One row of the profiler's data: a module of a model, its mean forward and backward times.
struct ProfiledModule {
  std::string model;
  int batch = 0;
  std::string node;    // the profiler's node id ("node14")
  int node_index = 0;  // its number: the rows' forward creation order
  std::string module;  // the module as the profiler prints it ("MaxPool2d(kernel_size=3, ...)")
  double fwd_ms = 0, bwd_ms = 0;
  double act_bytes = 0, param_bytes = 0;  // output for the whole batch, FP32; parameters x 4
  Origin origin;
};

struct ProfilerProtocol {
  std::map<std::string, std::string> modules;  // module class -> our layer type
  std::vector<std::string> unreported;         // our layer types wrapped but absent from the data
  std::vector<std::string> host_per_module;    // the framework's host costs, summed per pass
  bool input_copy_in_first_forward = false;
};

struct LayersModel {
  std::string id;        // the data's model name
  std::string workload{};  // a shipped workload or a path
  int batch = 0;           // the data's
  Origin origin;
};

// Another reading of what the profiler ran on (its GPU), reported beside the headline.
struct LayersReading {
  std::string id;
  std::string gpu;
  std::string why;
};

struct LayersSuite {
  std::string name;
  std::string title;
  std::string data_file;  // the profiler's rows (CSV), resolved from the suite's folder
  std::string gpu;
  std::string framework;
  std::string precision;
  ProfilerProtocol protocol;
  std::vector<LayersModel> models;
  std::vector<ProfiledModule> rows;  // every model's, in the data's order
  std::vector<LayersReading> readings;
  SuiteHistory history;  // first look: per model id and "overall", median |error %|
};

// Throws ConfigError with file and line for unknown keys, bad values, a missing data file, and
// a model whose rows cannot be paired with its workload's layers.
LayersSuite load_layers_suite(const std::string& name_or_path);

enum class ProfiledPass { forward, backward };
const char* to_string(ProfiledPass pass);

// One row and pass, predicted: the GPU time of its own layer, of the untimed layers charged to it
// and the host's cost of timing it.
struct ModuleTime {
  const ProfiledModule* row = nullptr;
  ProfiledPass pass = ProfiledPass::forward;
  std::string layers{};  // its layer, then the untimed layers charged to it ("res2.1.add")
  double measured_ms = 0;
  double own_ms = 0, charged_ms = 0, host_ms = 0;
  double predicted_ms() const { return own_ms + charged_ms + host_ms; }
  std::optional<double> error_pct;  // empty: not scored
  std::string not_scored{};         // why, where it is not
};

struct ModelComparison {
  std::string id;
  std::vector<ModuleTime> times{};  // per row, forward then backward
  std::optional<double> median_abs_error_pct{};
  // Sums over the scored rows, per ProfiledPass.
  std::array<double, 2> measured_ms{}, predicted_ms{};
};

struct LayersComparison {
  std::string gpu;
  std::vector<ModelComparison> models{};
  std::map<std::string, std::optional<double>> median_pct{};  // per model id, and "overall"
};

// Every model's rows predicted on `gpu` (empty: the suite's).
LayersComparison compare_layers_suite(const LayersSuite& suite, const std::string& gpu = "");

std::string layers_comparison_table(const LayersSuite& suite, const LayersComparison& c,
                                    const std::vector<LayersComparison>& readings);
std::string layers_comparison_json(const LayersSuite& suite, const LayersComparison& c,
                                   const std::vector<LayersComparison>& readings);

}  // namespace gpuscale::validation
