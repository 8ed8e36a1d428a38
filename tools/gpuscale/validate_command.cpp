#include "tools/gpuscale/validate_command.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "sim/replay/replay.hpp"
#include "tools/gpuscale/console.hpp"
#include "tools/gpuscale/result_text.hpp"
#include "topologies/core/error.hpp"
#include "validation/src/comparison.hpp"
#include "validation/src/layers_suite.hpp"
#include "validation/src/predictions.hpp"
#include "validation/src/report.hpp"
#include "validation/src/svg_plots.hpp"
#include "validation/src/train_suite.hpp"
#include "workloads/src/framework.hpp"

namespace gpuscale::cli {
namespace {

struct ValidateOptions {
  std::string suite = "dgx1-mxnet";
  std::string format = "table";
  std::string plot_dir;
  std::vector<std::string> without;
};

void print_progress(int done, int total, const sim::ResultRow& r) {
  progress(progress_line(done, total, r));
}

// The suite predicted and compared with its measurements as its setup reads it.
std::pair<validation::Metrics, validation::Comparison> compared(
    const validation::Suite& suite, const wl::FrameworkConfig& framework,
    const std::vector<std::string>& without) {
  validation::Metrics metrics(suite, validation::predict(suite, print_progress, without));
  // Points in the framework's calibration set are reported apart from the validation points.
  validation::Comparison comparison = validation::compare(suite, metrics, framework.calibration);
  return {std::move(metrics), std::move(comparison)};
}

// --plot and --without: figures and mechanisms of runs, which only a study suite simulates.
void refuse_run_options(const ValidateOptions& o, std::string_view kind) {
  if (!o.plot_dir.empty() || !o.without.empty()) {
    throw ConfigError(Origin{"--suite"}, fmt::format("suite '{}' is a {} suite: --plot and "
                                                     "--without apply to study suites only",
                                                     o.suite, kind));
  }
}

// A `kind: train` suite (validation/src/train_suite.hpp): Megatron-LM layouts, one `gpuscale
// train` job per point. Figures and --without belong to study suites.
void validate_train(const ValidateOptions& o) {
  refuse_run_options(o, "train");
  const validation::TrainSuite suite = validation::load_train_suite(o.suite);
  const validation::TrainComparison c =
      validation::compare_train_suite(suite, [](int done, int total) {
        progress(fmt::format("[{}/{}] simulated", done, total));
      });
  // Rendered whole before printing: an error never leaves half an output behind.
  const std::string out = o.format == "json" ? validation::train_comparison_json(suite, c)
                                             : validation::train_comparison_table(suite, c);
  progress(fmt::format("{} points in {:.1f} s", c.points.size(), c.wall_s));
  std::cout << out;
}

// A `kind: layers` suite (validation/src/layers_suite.hpp): a profiler's per-layer times against
// `workload layers`, on the suite's GPU and on each alternative reading's.
void validate_layers(const ValidateOptions& o) {
  refuse_run_options(o, "layers");
  const validation::LayersSuite suite = validation::load_layers_suite(o.suite);
  const validation::LayersComparison c = validation::compare_layers_suite(suite);
  std::vector<validation::LayersComparison> readings;
  for (const validation::LayersReading& reading : suite.readings)
    readings.push_back(validation::compare_layers_suite(suite, reading.gpu));
  // Rendered whole before printing: an error never leaves half an output behind.
  const std::string out = o.format == "json"
                              ? validation::layers_comparison_json(suite, c, readings)
                              : validation::layers_comparison_table(suite, c, readings);
  std::cout << out;
}

void validate(const ValidateOptions& o) {
  switch (validation::suite_kind(o.suite)) {
    case validation::SuiteKind::train: validate_train(o); return;
    case validation::SuiteKind::layers: validate_layers(o); return;
    case validation::SuiteKind::study: break;
  }
  const validation::Suite suite = validation::load_suite(o.suite);
  const wl::FrameworkConfig framework = wl::load_framework(suite.setup.framework);
  const auto [metrics, comparison] = compared(suite, framework, o.without);
  std::vector<validation::SetupReadingResult> readings;
  for (const validation::SetupAlternative& alternative : suite.setup.alternatives) {
    readings.push_back(
        {alternative, compared(suite.read_as(alternative), framework, o.without).second});
  }
  // Rendered whole before printing: an error never leaves half an output behind.
  const std::string out =
      o.format == "json"
          ? validation::comparison_json(suite, comparison, framework, readings).dump(2) + "\n"
          : validation::comparison_table(suite, comparison, framework, readings);
  if (!o.plot_dir.empty()) {
    const auto files = validation::write_plots(suite, metrics, comparison, o.plot_dir);
    progress(fmt::format("wrote {} figures to {}", files.size(), o.plot_dir));
  }
  std::cout << out;
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand("validate",
                                 "Compare predictions with a study's measurements: error per "
                                 "point, bounds, claims, MAPE per table");
  cmd->add_option("--suite", o->suite, "A shipped suite (validation/NAME) or a suite folder")
      ->capture_default_str();
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_option("--plot", o->plot_dir,
                  "Write SVG figures (speedup, FP+BP/WU, memory) into this folder");
  cmd->add_option("--without", o->without, "Mechanisms left out of the predictions, "
                                          "comma-separated (engine, host, input, setup, coordination, "
                                          "handover)")
      ->delimiter(',')
      ->check(CLI::IsMember(sim::mechanism_names()));
  cmd->callback([o] { validate(*o); });
}

}  // namespace gpuscale::cli
