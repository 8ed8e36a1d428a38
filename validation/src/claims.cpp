#include "validation/src/claims.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuscale::validation {
namespace {

// Ratios of times computed from the same simulated iteration (a weak epoch is exactly G strong
// ones when G x batch divides the images) come out equal up to rounding: compare with a slack
// of a billionth.
constexpr double kSlack = 1e-9;

bool above(double value, double limit, bool strict) {
  const double eps = kSlack * std::max(1.0, std::abs(limit));
  return strict ? value > limit + eps : value >= limit - eps;
}

bool below(double value, double limit, bool strict) {
  const double eps = kSlack * std::max(1.0, std::abs(limit));
  return strict ? value < limit - eps : value <= limit + eps;
}

// A deviation in percent against an optional tolerance: no tolerance, no verdict.
std::optional<bool> within(double deviation_pct, const std::optional<double>& limit_pct) {
  if (!limit_pct) return std::nullopt;
  return below(deviation_pct, *limit_pct, false);
}

std::string gpus_text(int gpus) { return fmt::format("{} GPU{}", gpus, gpus == 1 ? "" : "s"); }
std::string gpus_batch(int gpus, int batch) {
  return fmt::format("{} batch {}", gpus_text(gpus), batch);
}

// One case of a claim: a network, method, batch and GPU count (those its form varies).
struct Case {
  std::string network, method;
  int batch = 0, gpus = 0;
  RunKey run() const { return {network, method, gpus, batch}; }
  RunKey with_batch(int b) const { return {network, method, gpus, b}; }
  RunKey with_gpus(int g) const { return {network, method, g, batch}; }
};

// A dimension a form does not vary.
const std::vector<std::string> kAnyName = {""};
const std::vector<int> kAnyNumber = {0};

// Every combination, networks outermost.
std::vector<Case> cases(const std::vector<std::string>& networks,
                        const std::vector<std::string>& methods, const std::vector<int>& batches,
                        const std::vector<int>& gpus) {
  std::vector<Case> all;
  for (const auto& net : networks) {
    for (const auto& method : methods) {
      for (int batch : batches) {
        for (int g : gpus) all.push_back({net, method, batch, g});
      }
    }
  }
  return all;
}

// faster: one method beats the other on epoch time (lower) or on speedup (higher), by more than
// margin_pct: a smaller difference is a tie.
std::vector<Check> faster(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  const bool by_speedup = p.quantity == "speedup";
  const double margin = p.margin_pct / 100;
  for (const Case& c : cases(p.networks, {p.faster}, p.batches, p.gpus)) {
    const RunKey fast = c.run();
    const RunKey slow{c.network, p.slower, c.gpus, c.batch};
    const double ratio =
        by_speedup ? m.speedup(fast) / m.speedup(slow) : m.epoch_s(fast) / m.epoch_s(slow);
    checks.push_back({fmt::format("{} {}: {} {} / {}", c.network, gpus_batch(c.gpus, c.batch),
                                  by_speedup ? "speedup" : "epoch time", p.faster, p.slower),
                      ratio,
                      by_speedup ? above(ratio, 1 + margin, true) : below(ratio, 1 - margin, true)});
  }
  return checks;
}

// sublinear_speedup: the strong-scaling speedup on G GPUs is below G.
std::vector<Check> sublinear_speedup(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  for (const Case& c : cases(p.networks, p.methods, p.batches, p.gpus)) {
    const double s = m.speedup(c.run());
    checks.push_back({fmt::format("{} {} {}: speedup (< {})", c.network, c.method,
                                  gpus_batch(c.gpus, c.batch), c.gpus),
                      s, below(s, c.gpus, true)});
  }
  return checks;
}

// better_speedup: a network's speedup above each better_than network's, at the same method, G
// and batch, by more than margin_pct (a smaller difference is a tie, as in `faster`).
std::vector<Check> better_speedup(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  const double margin = p.margin_pct / 100;
  for (const Case& c : cases(p.networks, p.methods, p.batches, p.gpus)) {
    const double mine = m.speedup(c.run());
    for (const auto& other : p.better_than) {
      const double theirs = m.speedup({other, c.method, c.gpus, c.batch});
      checks.push_back({fmt::format("{} {} {}: speedup {:.2f} vs {} {:.2f}, ratio", c.network,
                                    c.method, gpus_batch(c.gpus, c.batch), mine, other, theirs),
                        mine / theirs, above(mine / theirs, 1 + margin, true)});
    }
  }
  return checks;
}

// similar_speedup: |speedup(network) / speedup(like) - 1| in percent.
std::vector<Check> similar_speedup(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  for (const Case& c : cases(p.networks, p.methods, p.batches, p.gpus)) {
    const double s = m.speedup(c.run());
    const double like = m.speedup({p.like, c.method, c.gpus, c.batch});
    const double deviation = 100 * std::abs(s / like - 1);
    checks.push_back({fmt::format("{} {} {}: speedup {:.2f} vs {} {:.2f}, deviation %", c.network,
                                  c.method, gpus_batch(c.gpus, c.batch), s, p.like, like),
                      deviation, within(deviation, p.within_pct)});
  }
  return checks;
}

// batch_linear: epoch time x batch stays constant; the largest deviation in percent.
std::vector<Check> batch_linear(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  const int b0 = p.batches.front();
  for (const Case& c : cases(p.networks, p.methods, kAnyNumber, p.gpus)) {
    const double base = m.epoch_s(c.with_batch(b0)) * b0;
    double worst = 0;
    for (int batch : p.batches)
      worst = std::max(worst, 100 * std::abs(m.epoch_s(c.with_batch(batch)) * batch / base - 1));
    checks.push_back({fmt::format("{} {} {}: largest |T(B) x B / (T({}) x {}) - 1| %", c.network,
                                  c.method, gpus_text(c.gpus), b0, b0),
                      worst, within(worst, p.within_pct)});
  }
  return checks;
}

// wu_scaling over batch: WU time per epoch falls (or rises) at every step of the batch; the
// worst step's ratio, within an optional tolerance in percent.
std::vector<Check> wu_over_batch(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  const double tolerance = p.within_pct.value_or(0) / 100;
  for (const Case& c : cases(p.networks, p.methods, kAnyNumber, p.gpus)) {
    double worst = p.decreasing ? 0 : HUGE_VAL;
    for (size_t i = 1; i < p.batches.size(); ++i) {
      const double ratio =
          m.wu_epoch_s(c.with_batch(p.batches[i])) / m.wu_epoch_s(c.with_batch(p.batches[i - 1]));
      worst = p.decreasing ? std::max(worst, ratio) : std::min(worst, ratio);
    }
    checks.push_back(
        {fmt::format("{} {} {}: WU per epoch, {} ratio of one batch step to the previous",
                     c.network, c.method, gpus_text(c.gpus), p.decreasing ? "largest" : "smallest"),
         worst,
         p.decreasing ? below(worst, 1 + tolerance, true) : above(worst, 1 - tolerance, true)});
  }
  return checks;
}

// wu_scaling over gpus, linear: G x WU(G) stays within within_pct of G0 x WU(G0).
std::vector<Check> wu_linear_in_gpus(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  const int g0 = p.gpus.front();
  const std::vector<int> others(p.gpus.begin() + 1, p.gpus.end());
  for (const Case& c : cases(p.networks, p.methods, p.batches, others)) {
    const double base = g0 * m.wu_epoch_s(c.with_gpus(g0));
    const double deviation = 100 * std::abs(c.gpus * m.wu_epoch_s(c.run()) / base - 1);
    checks.push_back({fmt::format("{} {} {}: |{} x WU({}) / ({} x WU({})) - 1| %", c.network,
                                  c.method, gpus_batch(c.gpus, c.batch), c.gpus, c.gpus, g0, g0),
                      deviation, within(deviation, p.within_pct)});
  }
  return checks;
}

// wu_scaling over gpus, better_than: each network's WU speedup from_gpus -> G beats each other's.
std::vector<Check> wu_better_than(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  auto wu_speedup = [&](const Case& c) {
    return m.wu_epoch_s(c.with_gpus(p.from_gpus)) / m.wu_epoch_s(c.run());
  };
  for (const Case& c : cases(p.networks, p.methods, p.batches, p.to_gpus)) {
    for (const auto& other : p.better_than) {
      const double mine = wu_speedup(c), theirs = wu_speedup({other, c.method, c.batch, c.gpus});
      checks.push_back(
          {fmt::format("{} {} {} -> {} GPUs batch {}: WU speedup {:.3g} vs {} {:.3g}, ratio",
                       c.network, c.method, p.from_gpus, c.gpus, c.batch, mine, other, theirs),
           mine / theirs, above(mine / theirs, 1, true)});
    }
  }
  return checks;
}

// fpbp_scaling at_least: FP+BP per epoch from_gpus / G is above at_least (per G if a map).
std::vector<Check> fpbp_at_least(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  for (const Case& c : cases(p.networks, p.methods, p.batches, p.to_gpus)) {
    const double ratio = m.fpbp_epoch_s(c.with_gpus(p.from_gpus)) / m.fpbp_epoch_s(c.run());
    const double limit = p.at_least ? *p.at_least : p.at_least_by_gpus.at(c.gpus);
    checks.push_back(
        {fmt::format("{} {} {} -> {} GPUs batch {}: FP+BP speedup ({} {:g})", c.network, c.method,
                     p.from_gpus, c.gpus, c.batch, p.strict ? ">" : ">=", limit),
         ratio, above(ratio, limit, p.strict)});
  }
  return checks;
}

// fpbp_scaling at_most: for each step G -> G', FP+BP per epoch G / G' is below at_most.
std::vector<Check> fpbp_at_most(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  for (const Case& c : cases(p.networks, p.methods, p.batches, kAnyNumber)) {
    for (const auto& [from, to] : p.steps) {
      const double ratio = m.fpbp_epoch_s(c.with_gpus(from)) / m.fpbp_epoch_s(c.with_gpus(to));
      checks.push_back(
          {fmt::format("{} {} {} -> {} GPUs batch {}: FP+BP speedup ({} {:g})", c.network, c.method,
                       from, to, c.batch, p.strict ? "<" : "<=", p.at_most),
           ratio, below(ratio, p.at_most, p.strict)});
    }
  }
  return checks;
}

// memory_methods_within: |M_a / M_b - 1| in percent for each pair of the suite's methods, a
// listed before b; the largest per network, batch, GPU count and column.
std::vector<Check> memory_methods_within(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  const std::vector<std::pair<std::string, MemoryColumn>> columns = {
      {"pretrain", MemoryColumn::Pretrain},
      {"gpu0", MemoryColumn::Gpu0},
      {"gpux", MemoryColumn::Gpux}};
  const auto& methods = m.methods();
  for (const Case& c : cases(p.networks, kAnyName, p.batches, p.gpus)) {
    for (const auto& [name, column] : columns) {
      if (std::find(p.columns.begin(), p.columns.end(), name) == p.columns.end()) continue;
      double worst = 0;
      for (size_t a = 0; a < methods.size(); ++a) {
        for (size_t b = a + 1; b < methods.size(); ++b) {
          const double ratio = m.memory_gb(column, {c.network, methods[a], c.gpus, c.batch}) /
                               m.memory_gb(column, {c.network, methods[b], c.gpus, c.batch});
          worst = std::max(worst, 100 * std::abs(ratio - 1));
        }
      }
      checks.push_back({fmt::format("{} {} memory {}: methods differ by %", c.network,
                                    gpus_batch(c.gpus, c.batch), name),
                        worst, within(worst, p.within_pct)});
    }
  }
  return checks;
}

// gpu0_more_memory: GPU0 holds more than the fullest other GPU.
std::vector<Check> gpu0_more_memory(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  for (const Case& c : cases(p.networks, p.methods, p.batches, p.gpus)) {
    const double ratio =
        m.memory_gb(MemoryColumn::Gpu0, c.run()) / m.memory_gb(MemoryColumn::Gpux, c.run());
    checks.push_back({fmt::format("{} {} {}: memory GPU0 / GPUx", c.network, c.method,
                                  gpus_batch(c.gpus, c.batch)),
                      ratio, above(ratio, 1, true)});
  }
  return checks;
}

// max_batch: the largest batch that fits lies in [largest_trainable_batch, first_failing_batch).
std::vector<Check> max_batch(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  for (const Case& c : cases(p.networks, p.methods, kAnyNumber, p.gpus)) {
    const int largest = m.largest_batch({c.network, c.method, c.gpus, p.gpu_memory.value});
    checks.push_back({fmt::format("{} {} {}, {}: largest batch (expected {}..{})", c.network,
                                  c.method, gpus_text(c.gpus), format_bytes(p.gpu_memory),
                                  p.largest_trainable_batch, p.first_failing_batch - 1),
                      static_cast<double>(largest),
                      largest >= p.largest_trainable_batch && largest < p.first_failing_batch});
  }
  return checks;
}

// weak_vs_strong: reduction of time per image, 100 x (1 - T_weak(G) / (G x T_strong(G))).
std::vector<Check> weak_vs_strong(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  for (const Case& c : cases(p.networks, p.methods, p.batches, p.gpus)) {
    const double reduction =
        100 * (1 - m.epoch_s(c.run(), sim::Scaling::Weak) / (c.gpus * m.epoch_s(c.run())));
    checks.push_back(
        {fmt::format("{} {} {}: weak-scaling reduction of time per image %", c.network, c.method,
                     gpus_batch(c.gpus, c.batch)),
         reduction,
         above(reduction, p.at_least_pct, false) && below(reduction, p.at_most_pct, false)});
  }
  return checks;
}

// method_speedup: epoch(baseline) / epoch(method), each run training a global mini-batch of N
// samples per iteration at the claim's batch per GPU (per group of `spatial` GPUs), so on
// N x spatial / batch GPUs. At the same N both need the same iterations per epoch.
struct MiniBatchRun {
  RunKey method, baseline;
  double speedup = 0;
};

MiniBatchRun at_mini_batch(const ClaimParams& p, const Metrics& m, const std::string& network,
                           int mini_batch) {
  const int batch = p.batches.front();
  const RunKey method{network, p.methods.front(), mini_batch * p.method_spatial / batch, batch};
  const RunKey baseline{network, p.baseline, mini_batch * p.baseline_spatial / batch, batch};
  return {method, baseline, m.epoch_s(baseline) / m.epoch_s(method)};
}

std::string mini_batch_text(const MiniBatchRun& r, int mini_batch) {
  return fmt::format("{} mini-batch {} ({} on {} GPUs, {} on {}, batch {})", r.method.network,
                     mini_batch, r.method.method, r.method.gpus, r.baseline.method,
                     r.baseline.gpus, r.method.batch);
}

// method_speedup at_least: the speedup at each mini-batch is at least (strict: above) at_least.
std::vector<Check> method_speedup_at_least(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  for (const auto& network : p.networks) {
    for (int n : p.mini_batches) {
      const MiniBatchRun r = at_mini_batch(p, m, network, n);
      checks.push_back({fmt::format("{}: epoch {} / {} ({} {:g})", mini_batch_text(r, n),
                                    p.baseline, p.methods.front(), p.strict ? ">" : ">=",
                                    *p.at_least),
                        r.speedup, above(r.speedup, *p.at_least, p.strict)});
    }
  }
  return checks;
}

// method_speedup within_pct: |speedup - 1| in percent, at each mini-batch.
std::vector<Check> method_speedup_within(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  for (const auto& network : p.networks) {
    for (int n : p.mini_batches) {
      const MiniBatchRun r = at_mini_batch(p, m, network, n);
      const double deviation = 100 * std::abs(r.speedup - 1);
      checks.push_back({fmt::format("{}: epoch {} / {} {:.3f}, deviation %", mini_batch_text(r, n),
                                    p.baseline, p.methods.front(), r.speedup),
                        deviation, within(deviation, p.within_pct)});
    }
  }
  return checks;
}

// method_speedup from/to: the speedup at to_mini_batch over that at from_mini_batch, below 1
// (decreasing) or above it, strictly.
std::vector<Check> method_speedup_trend(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  for (const auto& network : p.networks) {
    const MiniBatchRun from = at_mini_batch(p, m, network, p.from_mini_batch);
    const MiniBatchRun to = at_mini_batch(p, m, network, p.to_mini_batch);
    const double ratio = to.speedup / from.speedup;
    checks.push_back({fmt::format("{} batch {}: speedup of {} over {} at mini-batch {} ({:.3f}) / "
                                  "at {} ({:.3f}) ({} 1)",
                                  network, from.method.batch, p.methods.front(), p.baseline,
                                  p.to_mini_batch, to.speedup, p.from_mini_batch, from.speedup,
                                  p.decreasing ? "<" : ">"),
                      ratio, p.decreasing ? below(ratio, 1, true) : above(ratio, 1, true)});
  }
  return checks;
}

// fits_memory: the fullest GPU's predicted memory against the GPU memory of the claim's machine
// (the setup's, or `machine`'s): within it (fits) or beyond it (does not fit).
std::vector<Check> fits_memory(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  const double capacity_gb = m.gpu_memory_gb(p.machine);
  for (const Case& c : cases(p.networks, p.methods, p.batches, p.gpus)) {
    const RunKey run{c.network, c.method, c.gpus, c.batch, p.machine};
    const double fullest =
        std::max(m.memory_gb(MemoryColumn::Gpu0, run), m.memory_gb(MemoryColumn::Gpux, run));
    const bool fits = below(fullest, capacity_gb, false);
    checks.push_back({fmt::format("{} {} {}{}: fullest GPU's memory, GB ({} {:g})", c.network,
                                  c.method, gpus_batch(c.gpus, c.batch),
                                  p.machine.empty() ? "" : " on " + p.machine,
                                  p.fits ? "<=" : ">", capacity_gb),
                      fullest, fits == p.fits});
  }
  return checks;
}

// The runs a claim about servers, precisions or messages compares: each network with each of the
// claim's `methods` (none given: each of the network's) at its first batch (the one suite.yaml
// names first: a study comparing servers runs each benchmark at its default batch), on
// `machine`, at each of `gpus`.
std::vector<RunKey> default_runs(const ClaimParams& p, const Metrics& m) {
  std::vector<RunKey> runs;
  for (const auto& net : p.networks) {
    const int batch = m.suite().batches_of(net).front();
    for (const auto& method : p.methods.empty() ? m.suite().methods_of(net) : p.methods) {
      for (int g : p.gpus) runs.push_back({net, method, g, batch, p.machine});
    }
  }
  return runs;
}

std::string run_text(const RunKey& r) {
  return fmt::format("{} {} {} batch {}{}", r.network, r.method, gpus_text(r.gpus), r.batch,
                     r.machine.empty() ? "" : " on " + r.machine);
}

// machine_gain: how much faster `machine` trains than each baseline machine, in percent,
// within [at_least_pct, at_most_pct] (an end not given is open); with max_at_least_pct, the
// largest gain reaches it too ("up to 40%").
std::vector<Check> machine_gain(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  double largest = -std::numeric_limits<double>::infinity();
  for (const RunKey& run : default_runs(p, m)) {
    for (const auto& baseline : p.baseline_machines) {
      const double gain = m.gain_pct(run, baseline);
      largest = std::max(largest, gain);
      checks.push_back({fmt::format("{}: gain over {}, % (in [{:g}, {:g}])", run_text(run),
                                    baseline, p.at_least_pct, p.at_most_pct),
                        gain,
                        above(gain, p.at_least_pct, false) && below(gain, p.at_most_pct, false)});
    }
  }
  if (p.max_at_least_pct) {
    checks.push_back({fmt::format("largest gain, % (>= {:g})", *p.max_at_least_pct), largest,
                      above(largest, *p.max_at_least_pct, false)});
  }
  return checks;
}

// precision_speedup in a range: epoch(the network's twin in the other precision) / epoch, within
// [at_least, at_most].
std::vector<Check> precision_speedup_within(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  const double low = p.at_least.value_or(0);
  for (const RunKey& run : default_runs(p, m)) {
    const double r = m.precision_speedup(run);
    checks.push_back({fmt::format("{}: epoch of {} / epoch (in [{:g}, {:g}])", run_text(run),
                                  m.suite().twin(run.network), low, p.at_most),
                      r, above(r, low, false) && below(r, p.at_most, false)});
  }
  return checks;
}

// precision_speedup, largest: the `largest` network's speedup above every other network's, at
// the same GPU count (each network at its own default batch).
std::vector<Check> precision_speedup_largest(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  ClaimParams top = p;
  top.networks = {p.largest};
  for (const RunKey& best : default_runs(top, m)) {
    const double r_best = m.precision_speedup(best);
    for (const RunKey& run : default_runs(p, m)) {
      if (run.network == p.largest || run.gpus != best.gpus) continue;
      const double r = m.precision_speedup(run);
      checks.push_back({fmt::format("{}: speedup {:.2f} / that of {} {:.2f} (> 1)", run_text(best),
                                    r_best, run.network, r),
                        r_best / r, above(r_best / r, 1, true)});
    }
  }
  return checks;
}

// scaling_efficiency: 100 x speedup(G) / G on `machine`, above `above_pct` (strictly) or at most
// `at_most_pct`.
std::vector<Check> scaling_efficiency(const ClaimParams& p, const Metrics& m) {
  std::vector<Check> checks;
  for (const RunKey& run : default_runs(p, m)) {
    const double e = 100 * m.speedup(run) / run.gpus;
    const bool over = p.above_pct.has_value();
    checks.push_back({fmt::format("{}: scaling efficiency, % ({} {:g})", run_text(run),
                                  over ? ">" : "<=", over ? *p.above_pct : p.at_most_pct),
                      e, over ? above(e, *p.above_pct, true) : below(e, p.at_most_pct, false)});
  }
  return checks;
}

// message_sizes: more than `above_pct` percent of the steady iterations' gradient allreduces
// (each fused buffer, bucket or tensor; by count, as a profile of the run counts them) are of a
// size within (lo, hi], for each of `methods` at each GPU count (the network's default batch).
std::vector<Check> message_sizes(const ClaimParams& p, const Metrics& m) {
  constexpr double kMiB = 1 << 20;
  const auto [lo, hi] = p.message_sizes;
  std::vector<Check> checks;
  for (const RunKey& run : default_runs(p, m)) {
    const std::vector<std::vector<double>>& iterations = m.allreduce_bytes(run);
    long in_range = 0, all = 0;
    for (const std::vector<double>& sizes : iterations) {
      in_range +=
          std::count_if(sizes.begin(), sizes.end(), [&](double b) { return b > lo && b <= hi; });
      all += static_cast<long>(sizes.size());
    }
    const double pct = all == 0 ? 0 : 100.0 * static_cast<double>(in_range) / all;
    checks.push_back({fmt::format("{}: {} of {} allreduces ({} iterations) in ({:g}, {:g}] MiB, "
                                  "% (> {:g})",
                                  run_text(run), in_range, all, iterations.size(), lo / kMiB,
                                  hi / kMiB, *p.above_pct),
                      pct, above(pct, *p.above_pct, true)});
  }
  return checks;
}

std::optional<bool> verdict(const std::vector<Check>& checks) {
  if (checks.empty()) return std::nullopt;
  bool unknown = false;
  for (const Check& c : checks) {
    if (c.holds == false) return false;
    unknown = unknown || !c.holds;
  }
  if (unknown) return std::nullopt;
  return true;
}

}  // namespace

const std::vector<ClaimForm>& claim_forms() {
  // clang-format off: one form per line reads as the table it is
  static const std::vector<ClaimForm> forms = {
    {"faster", "", {"faster", "slower", "networks", "gpus", "batch", "quantity"}, {"margin_pct"}, faster},
    {"similar_speedup", "", {"network", "like", "methods", "gpus", "batch", "within_pct"}, {}, similar_speedup},
    {"sublinear_speedup", "", {"networks", "methods", "gpus", "batches"}, {}, sublinear_speedup},
    {"better_speedup", "", {"networks", "better_than", "methods", "gpus", "batch"}, {"margin_pct"}, better_speedup},
    {"batch_linear", "", {"networks", "methods", "gpus", "batches", "within_pct"}, {}, batch_linear},
    {"wu_scaling", "batch", {"over", "networks", "methods", "gpus", "batches", "decreasing"}, {"within_pct"}, wu_over_batch},
    {"wu_scaling", "gpus", {"over", "networks", "methods", "gpus", "batch", "within_pct"}, {}, wu_linear_in_gpus},
    {"wu_scaling", "gpus", {"over", "networks", "better_than", "methods", "from_gpus", "to_gpus", "batch"}, {}, wu_better_than},
    {"fpbp_scaling", "", {"networks", "methods", "from_gpus", "to_gpus", "at_least", "batch"}, {"strict"}, fpbp_at_least},
    {"fpbp_scaling", "", {"networks", "methods", "steps", "at_most", "batch"}, {"strict"}, fpbp_at_most},
    {"memory_methods_within", "", {"networks", "batches", "gpus", "columns", "within_pct"}, {}, memory_methods_within},
    {"gpu0_more_memory", "", {"networks", "batches", "methods", "gpus"}, {}, gpu0_more_memory},
    {"max_batch", "", {"network", "largest_trainable_batch", "first_failing_batch", "gpu_memory", "method", "gpus"}, {}, max_batch},
    {"weak_vs_strong", "", {"networks", "methods", "batches", "gpus", "at_most_pct", "at_least_pct"}, {}, weak_vs_strong},
    {"method_speedup", "", {"networks", "method", "baseline", "mini_batches", "batch", "at_least"}, {"strict"}, method_speedup_at_least},
    {"method_speedup", "", {"networks", "method", "baseline", "mini_batches", "batch", "within_pct"}, {}, method_speedup_within},
    {"method_speedup", "", {"networks", "method", "baseline", "from_mini_batch", "to_mini_batch", "batch", "decreasing"}, {}, method_speedup_trend},
    {"fits_memory", "", {"networks", "methods", "gpus", "batch", "fits"}, {"machine"}, fits_memory},
    {"machine_gain", "", {"networks", "baseline_machines", "gpus"}, {"machine", "at_least_pct", "at_most_pct", "max_at_least_pct"}, machine_gain},
    {"precision_speedup", "", {"networks", "gpus", "at_least", "at_most"}, {"machine"}, precision_speedup_within},
    {"precision_speedup", "", {"networks", "gpus", "largest"}, {"machine"}, precision_speedup_largest},
    {"scaling_efficiency", "", {"networks", "gpus", "above_pct"}, {"machine"}, scaling_efficiency},
    {"scaling_efficiency", "", {"networks", "gpus", "at_most_pct"}, {"machine"}, scaling_efficiency},
    {"message_sizes", "", {"networks", "methods", "gpus", "message_sizes", "above_pct"}, {"machine"}, message_sizes},
  };
  // clang-format on
  return forms;
}

ClaimResult evaluate_claim(const Claim& claim, const Metrics& metrics) {
  ClaimResult result{claim.id, claim.kind, std::nullopt, {}, claim.why_not_checked};
  if (claim.form == nullptr) return result;
  result.checks = claim.form->check(claim.params, metrics);
  result.holds = verdict(result.checks);
  return result;
}

}  // namespace gpuscale::validation
