#include "tools/gpuscale/fit_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "sim/core/error.hpp"
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

std::string format_us(Seconds s) { return fmt::format("{:.4g} us", s.value * 1e6); }

void fit(const FitOptions& o) {
  const validation::FitResult r = validation::fit_host_costs(o.framework, [](int n) {
    if (n % 10 == 0) std::cerr << fmt::format("[fit] {} simulations of the calibration set\n", n);
  });
  const wl::Calibration& cal = r.framework.calibration;
  std::string out = fmt::format("Fit of {} ({}) on {}: {} points of suite {}, {} simulations\n",
                                r.framework.name, r.framework.file, cal.set, cal.points.size(),
                                cal.suite, r.evaluations);
  out += fmt::format("  {:<16} {:>11} {:>11}  {:<24} {}\n", "host cost", "before", "after",
                     "sourced range", "outcome");
  for (const validation::FittedCost& c : r.costs) {
    out += fmt::format("  {:<16} {:>11} {:>11}  [{}, {}]{:<6} {}\n", c.name, format_us(c.before),
                       format_us(c.after), format_us(c.low), format_us(c.high), "",
                       validation::to_string(c.outcome));
  }
  out += "  calibration point                                  error % at the fit\n";
  for (const auto& [id, error] : r.residuals_pct) out += fmt::format("  {:<50} {:>+8.2f}\n", id, error);
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
      "fit", "Fit a framework's fitted host costs on its calibration set and write them into its file");
  cmd->add_option("--framework", o->framework, "A shipped framework (workloads/frameworks) or a file")
      ->capture_default_str();
  cmd->add_flag("--dry-run", o->dry_run, "Print the fit, leave the file as it is");
  cmd->callback([o] { fit(*o); });
}

}  // namespace gpuscale::cli
