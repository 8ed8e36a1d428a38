#include "tools/gpuscale/fit_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "tools/gpuscale/console.hpp"
#include "topologies/core/error.hpp"
#include "validation/src/fit.hpp"

namespace gpuscale::cli {
namespace {

struct FitOptions {
  std::string framework = "mxnet";
  bool dry_run = false;
};

std::string today() {
  const auto days = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  const std::chrono::year_month_day date{days};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
}

void fit(const FitOptions& o) {
  const validation::FitResult r = validation::fit_framework(o.framework, [](int n) {
    if (n % 10 == 0) progress(fmt::format("[fit] {} simulations of the calibration set", n));
  });
  const wl::Calibration& cal = r.framework.calibration;
  std::string out = fmt::format("Fit of {} ({}) on {}: {} points, {} simulations\n",
                                r.framework.name, r.framework.file, cal.set, cal.points.size(),
                                r.evaluations);
  out += fmt::format("  {:<16} {:>11} {:>11}  {:<26} {}\n", "parameter", "before", "after",
                     "sourced range", "outcome");
  for (const validation::FittedParameter& p : r.parameters) {
    out += fmt::format("  {:<16} {:>11} {:>11}  {:<26} {}\n", p.name,
                       wl::format_parameter(p.unit, p.before), wl::format_parameter(p.unit, p.after),
                       fmt::format("[{}, {}]", wl::format_parameter(p.unit, p.low),
                                   wl::format_parameter(p.unit, p.high)),
                       validation::to_string(p.outcome));
  }
  out += fmt::format("  {:<62} {}\n", "calibration point", "error % at the fit");
  for (const auto& [point, error] : r.residuals_pct)
    out += fmt::format("  {:<62} {:>+8.2f}\n", point.suite + ": " + point.id, error);
  std::cout << out;
  if (o.dry_run) {
    std::cout << fmt::format("dry run: {} is unchanged\n", r.framework.file);
    return;
  }
  validation::write_fit(r, today());
  std::cout << fmt::format("wrote the fitted values and their provenance into {}\n",
                           r.framework.file);
}

}  // namespace

void add_fit_command(CLI::App& app) {
  auto o = std::make_shared<FitOptions>();
  auto* cmd = app.add_subcommand(
      "fit", "Fit a framework's fitted parameters on its calibration set and write them into its file");
  cmd->add_option("--framework", o->framework, "A shipped framework (workloads/frameworks) or a file")
      ->capture_default_str();
  cmd->add_flag("--dry-run", o->dry_run, "Print the fit, leave the file as it is");
  cmd->callback([o] { fit(*o); });
}

}  // namespace gpuscale::cli
