// Host noise: how much longer a fixed amount of work takes on one thread from one run to the
// next, while the machine's other cores run a training process's kind of load. The result is
// the empirical distribution of the factor (run time / median run time) that a machine file's
// `variability.host` takes (docs/variability.md), printed as its percentiles and, with --yaml,
// written as that entry with its source.
//
// The work is a chain of dependent multiply-adds (no memory traffic, the same instructions every
// run), so every difference between runs is the host's: interrupts, the scheduler, frequency
// changes, another thread on the same core, cache and memory pressure from the load. The load
// threads copy 32 MiB buffers back and forth and compute between copies, as decode threads and
// engine workers keep a training node's memory system and cores busy. One run's work defaults
// to 2 ms, about one GPU's engine work in one iteration of the MXNet replay (docs/variability.md).
// Run: build/tools/bench/bench_host_noise [--work-us 2000] [--runs 3000] [--yaml FILE]
#include <fmt/format.h>
#include <sys/utsname.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "tools/bench/empirical_factors.hpp"

namespace {

using namespace gpuscale::bench;

using Clock = std::chrono::steady_clock;

struct Settings {
  double work_us = 2000;
  int runs = 3000;
  int load_threads = -1;  // -1: every other hardware thread
  int quantiles = 101;    // listed at probabilities 0, 1/100, ..., 1
  std::string yaml;
};

// `steps` dependent multiply-adds; the result is returned so that the compiler keeps them.
double fixed_work(long steps, double seed) {
  double x = seed;
  for (long i = 0; i < steps; ++i) x = x * 0.999999 + 1e-7;
  return x;
}

// Steps that take `us` microseconds on this thread: the median of a few timed tries, scaled.
long steps_for(double us) {
  const long probe = 1'000'000;
  std::vector<double> seconds;
  volatile double sink = 0;
  for (int i = 0; i < 9; ++i) {
    const auto start = Clock::now();
    sink = sink + fixed_work(probe, 1.0 + i);
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return std::max(1L, static_cast<long>(probe * us * 1e-6 / seconds[seconds.size() / 2]));
}

// A training node's background: copies through memory and arithmetic, until `stop`.
void load(const std::atomic<bool>& stop) {
  std::vector<char> a(32 << 20, 1), b(32 << 20, 2);
  volatile double sink = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    std::memcpy(b.data(), a.data(), a.size());
    std::memcpy(a.data(), b.data(), b.size());
    sink = sink + fixed_work(200'000, 1.0);
  }
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

int run(const Settings& s) {
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int loaders = s.load_threads >= 0 ? s.load_threads : hardware - 1;
  const long steps = steps_for(s.work_us);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < loaders; ++i) threads.emplace_back(load, std::cref(stop));

  std::vector<double> seconds;
  volatile double sink = 0;
  for (int i = 0; i < s.runs + 10; ++i) {
    const auto start = Clock::now();
    sink = sink + fixed_work(steps, 1.0 + i);
    if (i >= 10) seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  stop = true;
  for (std::thread& t : threads) t.join();

  const double median = gpuscale::quantile(seconds, 0.5);
  const std::vector<double> factors = factors_over_median(seconds);
  utsname host{};
  uname(&host);
  fmt::print("{} ({} hardware threads), Linux {}: {} runs of {:.0f} us of work, {} load threads\n",
             cpu_model(), hardware, host.release, s.runs, median * 1e6, loaders);
  fmt::print("factor = run time / median:  {}\n", factor_percentiles(factors));
  if (s.yaml.empty()) return 0;

  const std::string list = quantile_list(factors, s.quantiles);
  std::ofstream out(s.yaml);
  out << fmt::format(
      "# tools/bench/bench_host_noise: the factor (run time / median) of {} runs of {:.0f} us of\n"
      "# dependent multiply-adds on one thread, {} load threads copying and computing beside it.\n"
      "cpu: \"{}\"\nhardware_threads: {}\nkernel: \"Linux {}\"\ndate: \"{}\"\n"
      "host: {{distribution: empirical, quantiles: [{}],\n"
      "       source: \"tools/bench/bench_host_noise on {}, {}\"}}\n",
      s.runs, median * 1e6, loaders, cpu_model(), hardware, host.release, today(), list,
      cpu_model(), today());
  if (!out) {
    std::cerr << "bench_host_noise: could not write " << s.yaml << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Host noise: the spread of a fixed amount of work on one thread under load"};
  app.add_option("--work-us", s.work_us, "Work per run, microseconds")
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
  app.add_option("--runs", s.runs, "Timed runs")
      ->check(CLI::Range(100, 1000000))
      ->capture_default_str();
  app.add_option("--load-threads", s.load_threads, "Threads loading the machine (default: every "
                                                   "other hardware thread)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--quantiles", s.quantiles, "Factors listed in the YAML, at equally spaced "
                                             "probabilities from 0 to 1")
      ->check(CLI::Range(2, 1001))
      ->capture_default_str();
  app.add_option("--yaml", s.yaml, "Write the result as a machine file's variability.host entry");
  CLI11_PARSE(app, argc, argv);
  return run(s);
}
