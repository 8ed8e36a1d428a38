// What one CPU core costs the input pipeline: JPEG decode and training augmentation per image, as
// one of MXNet ImageRecordIter's decode threads does it, timed stage by stage on one thread, and
// the images/s of N threads sharing the set (how decoding scales with cores).
//
// Pipelines (decode_pipeline.hpp has the stages):
//   crop-flip  decode, resize (shorter side to --resize, 256), random 224x224 crop, random
//              horizontal flip, float conversion with mean/std normalisation into CHW;
//   mxnet3     MXNet's augmentation level 3 (train_imagenet.py): decode, resize, affine warp
//              (rotation, shear, aspect ratio), crop, HLS colour jitter, flip, normalisation;
//   dali-host  what DALI's GPU ("mixed") decoder leaves on a CPU thread: the Huffman decode to
//              DCT coefficients, nothing else (the GPU does the rest).
// Each pass runs every image of the set once, with random choices seeded by (seed, pass, image);
// the reported figure is the median of --reps passes after one untimed pass. The measured clock
// (a chain of dependent additions, one per cycle) lets the per-core rate be carried to another CPU
// as cycles per image (tools/bench/README.md, "bench_decode").
// --batch-jitter B times whole batches instead: how much one batch's decode varies from the next
// (the images drawn, the host), as the empirical distribution a machine file's
// `variability.input` takes (docs/variability.md).
// Run: build/tools/bench/bench_decode [--aug crop-flip,mxnet3] [--yaml FILE] (--help lists all).
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "tools/bench/decode_pipeline.hpp"
#include "tools/bench/empirical_factors.hpp"

namespace {

using namespace gpuscale::bench;
using Clock = std::chrono::steady_clock;

constexpr int kCropPx = 224;  // the networks' input: 3x224x224

enum Stage { kHuffman, kDecode, kResize, kWarp, kCrop, kJitter, kFlip, kNormalise, kStages };
constexpr const char* kStageNames[kStages] = {"huffman", "decode", "resize", "warp",
                                              "crop",    "jitter", "flip",   "normalise"};

enum class Pipeline { kCropFlip, kMxnet3, kDaliHost };
Pipeline pipeline_named(const std::string& name) {
  return name == "mxnet3" ? Pipeline::kMxnet3 : name == "dali-host" ? Pipeline::kDaliHost : Pipeline::kCropFlip;
}

struct Settings {
  int resize = 256;  // 0: none, as MXNet's ImageRecordIter without its `resize` parameter
  int reps = 5;
  std::uint64_t seed = 2012;
  Mxnet3 mxnet3;
};

struct Workspace {
  Image decoded, resized, warped, cropped;
  std::vector<float> chw = std::vector<float>(3 * kCropPx * kCropPx);
};

// One image through a pipeline; `lap(stage)` is called as each stage ends.
template <class Lap>
void run_pipeline(const Jpeg& jpeg, Pipeline pipeline, const Settings& s, std::mt19937_64& rng, Workspace& w,
                  Lap&& lap) {
  if (pipeline == Pipeline::kDaliHost) {
    entropy_decode(jpeg);
    lap(kHuffman);
    return;
  }
  const bool mxnet3 = pipeline == Pipeline::kMxnet3;
  decode(jpeg, w.decoded);
  lap(kDecode);
  const Image* current = &w.decoded;
  if (s.resize > 0) {
    resize_shorter_side(*current, s.resize, w.resized);
    current = &w.resized;
    lap(kResize);
  }
  if (mxnet3) {
    warp_affine(*current, s.mxnet3, rng, w.warped);
    current = &w.warped;
    lap(kWarp);
  }
  if (current->width < kCropPx || current->height < kCropPx)
    throw std::runtime_error(fmt::format("{}: {}x{} px, smaller than the {} px crop (raise --resize)", jpeg.name,
                                         current->width, current->height, kCropPx));
  const int x = std::uniform_int_distribution<int>(0, current->width - kCropPx)(rng);
  const int y = std::uniform_int_distribution<int>(0, current->height - kCropPx)(rng);
  crop(*current, x, y, kCropPx, w.cropped);
  lap(kCrop);
  if (mxnet3) {
    jitter_hls(w.cropped, s.mxnet3, rng);
    lap(kJitter);
  }
  if (std::bernoulli_distribution(0.5)(rng)) flip_horizontal(w.cropped);
  lap(kFlip);
  normalise_chw(w.cropped, w.chw.data());
  lap(kNormalise);
}

std::uint64_t image_seed(std::uint64_t seed, int pass, std::size_t image) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(pass) * 1'000'003 + image + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;  // splitmix64's finaliser: nearby inputs, unrelated seeds
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct PipelineResult {
  std::string name;
  std::vector<Stage> stages;
  double stage_us[kStages] = {};  // median over passes of the mean per image
  double total_us = 0;            // median over passes of the whole pipeline's mean per image
  std::vector<std::pair<int, double>> rates;  // threads, images/s of all of them
};

PipelineResult time_one_thread(const std::vector<Jpeg>& set, const std::string& name, const Settings& s) {
  PipelineResult r{name, {}, {}, 0, {}};
  const Pipeline pipeline = pipeline_named(name);
  Workspace w;
  std::vector<double> per_pass[kStages], totals;
  bool ran[kStages] = {};
  for (int pass = -1; pass < s.reps; ++pass) {  // pass -1: untimed, warms caches and buffers
    double sum[kStages] = {};
    for (std::size_t i = 0; i < set.size(); ++i) {
      std::mt19937_64 rng(image_seed(s.seed, pass, i));
      auto last = Clock::now();
      run_pipeline(set[i], pipeline, s, rng, w, [&](Stage stage) {
        const auto now = Clock::now();
        sum[stage] += std::chrono::duration<double, std::micro>(now - last).count();
        ran[stage] = true;
        last = now;
      });
    }
    if (pass < 0) continue;
    double total = 0;
    for (int st = 0; st < kStages; ++st) {
      per_pass[st].push_back(sum[st] / set.size());
      total += sum[st] / set.size();
    }
    totals.push_back(total);
  }
  for (int st = 0; st < kStages; ++st) {
    if (!ran[st]) continue;
    r.stages.push_back(static_cast<Stage>(st));
    r.stage_us[st] = median(per_pass[st]);
  }
  r.total_us = median(totals);
  return r;
}

// Images/s of `threads` threads taking images from the set in turn until it is done.
double images_per_second(const std::vector<Jpeg>& set, Pipeline pipeline, const Settings& s, int threads) {
  std::vector<double> walls;
  for (int pass = -1; pass < s.reps; ++pass) {
    std::atomic<std::size_t> next{0};
    const auto start = Clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&] {
        Workspace w;
        for (std::size_t i; (i = next++) < set.size();) {
          std::mt19937_64 rng(image_seed(s.seed, pass, i));
          run_pipeline(set[i], pipeline, s, rng, w, [](Stage) {});
        }
      });
    for (auto& worker : workers) worker.join();
    if (pass >= 0) walls.push_back(seconds_since(start));
  }
  return set.size() / median(walls);
}

// Seconds per batch of `batch` images drawn from the set at random (with replacement), each batch
// decoded and augmented whole by one of `threads` threads, as one GPU's loader thread takes a
// batch; `batches` are timed, after one untimed batch per thread.
std::vector<double> batch_seconds(const std::vector<Jpeg>& set, Pipeline pipeline, const Settings& s,
                                  int threads, int batch, int batches) {
  const int total = batches + threads;
  std::vector<double> seconds(static_cast<std::size_t>(total));
  std::atomic<int> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&] {
      Workspace w;
      for (int b; (b = next++) < total;) {
        std::mt19937_64 rng(image_seed(s.seed, -2, static_cast<std::size_t>(b)));
        std::uniform_int_distribution<std::size_t> any_image(0, set.size() - 1);
        const auto start = Clock::now();
        for (int i = 0; i < batch; ++i) run_pipeline(set[any_image(rng)], pipeline, s, rng, w, [](Stage) {});
        seconds[static_cast<std::size_t>(b)] = seconds_since(start);
      }
    });
  for (auto& worker : workers) worker.join();
  return {seconds.begin() + threads, seconds.end()};
}

// The clock this core runs at: each addition depends on the one before, so the chain retires one
// per cycle on any out-of-order core of the last decade; the empty asm keeps the compiler from
// folding the chain. The fastest of 5 trials: the one least disturbed by other processes.
double measured_clock_ghz() {
  constexpr std::uint64_t kAdds = 200'000'000;
  double best = 0;
  for (int trial = 0; trial < 5; ++trial) {
    std::uint64_t x = 0;
    const auto start = Clock::now();
    for (std::uint64_t i = 0; i < kAdds; ++i) {
      x += i;
      asm volatile("" : "+r"(x));
    }
    best = std::max(best, kAdds / seconds_since(start) / 1e9);
  }
  return best;
}

struct Host {
  std::string cpu = "unknown", vendor = "unknown", family = "unknown", model = "unknown", stepping = "unknown";
  std::string cpuinfo_mhz = "unknown", base_mhz = "unknown", max_mhz = "unknown";
  unsigned logical_cpus = std::thread::hardware_concurrency();
  double measured_ghz = 0;
};

std::string sysfs_mhz(const char* file) {
  std::ifstream in(std::string("/sys/devices/system/cpu/cpu0/cpufreq/") + file);
  double khz = 0;
  return in >> khz ? fmt::format("{:.0f}", khz / 1000) : "unknown";
}

Host describe_host() {
  Host h;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line) && !line.empty();) {  // the first processor
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon), value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key == "model name") h.cpu = value;
    if (key == "vendor_id") h.vendor = value;
    if (key == "cpu family") h.family = value;
    if (key == "model") h.model = value;
    if (key == "stepping") h.stepping = value;
    if (key == "cpu MHz") h.cpuinfo_mhz = value;
  }
  h.base_mhz = sysfs_mhz("base_frequency");
  h.max_mhz = sysfs_mhz("cpuinfo_max_freq");
  h.measured_ghz = measured_clock_ghz();
  return h;
}

std::string compiler() {
#if defined(__clang__)
  return "clang " __clang_version__;
#else
  return "GCC " __VERSION__;
#endif
}

std::string with_mhz(const std::string& mhz) { return mhz == "unknown" ? mhz : mhz + " MHz"; }

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

struct SetSummary {
  std::string source;
  double mean_width = 0, mean_height = 0, mean_megapixels = 0, mean_kb = 0;
  double mean_coefficient_kb = 0;  // Huffman-decoded DCT coefficients, int16 each
};

SetSummary summarise(const std::vector<Jpeg>& set, const std::string& source) {
  SetSummary s{source};
  for (const Jpeg& j : set) {
    s.mean_width += j.width;
    s.mean_height += j.height;
    s.mean_megapixels += j.width * static_cast<double>(j.height) / 1e6;
    s.mean_kb += j.bytes.size() / 1e3;
    s.mean_coefficient_kb += entropy_decode(j) / 1e3;
  }
  for (double* v : {&s.mean_width, &s.mean_height, &s.mean_megapixels, &s.mean_kb, &s.mean_coefficient_kb})
    *v /= set.size();
  return s;
}

void print_table(const std::vector<PipelineResult>& results) {
  fmt::print("{:<26}", "us per image (median)");
  for (const auto& r : results) fmt::print("{:>12}", r.name);
  fmt::print("\n");
  for (int st = 0; st < kStages; ++st) {
    if (std::none_of(results.begin(), results.end(),
                     [&](const auto& r) { return std::count(r.stages.begin(), r.stages.end(), st) > 0; }))
      continue;
    fmt::print("  {:<24}", kStageNames[st]);
    for (const auto& r : results)
      fmt::print("{:>12}",
                 std::count(r.stages.begin(), r.stages.end(), st) ? fmt::format("{:.1f}", r.stage_us[st]) : "-");
    fmt::print("\n");
  }
  fmt::print("  {:<24}", "total");
  for (const auto& r : results) fmt::print("{:>12.1f}", r.total_us);
  fmt::print("\n{:<26}", "img/s per core, 1 thread");
  for (const auto& r : results) fmt::print("{:>12.1f}", 1e6 / r.total_us);
  fmt::print("\n");
  for (std::size_t t = 0; t < results.front().rates.size(); ++t) {
    const int threads = results.front().rates[t].first;
    fmt::print("{:<26}", fmt::format("img/s, {} thread{}", threads, threads > 1 ? "s" : ""));
    for (const auto& r : results) fmt::print("{:>12.1f}", r.rates[t].second);
    fmt::print("\n{:<26}", "  per thread");
    for (const auto& r : results) fmt::print("{:>12.1f}", r.rates[t].second / threads);
    fmt::print("\n");
  }
}

void write_yaml(const std::string& path, const Host& h, const SetSummary& set, const std::vector<Jpeg>& jpegs,
                const Settings& s, const std::string& method, const std::vector<PipelineResult>& results) {
  std::ostringstream y;
  y << "# Written by bench_decode (tools/bench/README.md, \"bench_decode\").\n";
  y << "cpu: " << quoted(h.cpu) << "\n";
  y << fmt::format(
      "cpu_details: {{vendor: {}, family: {}, model: {}, stepping: {}, logical_cpus: {},\n"
      "              base_clock: {}, max_clock: {}, cpuinfo_clock: {},\n"
      "              measured_clock: {:.3f} GHz}}\n",
      h.vendor, h.family, h.model, h.stepping, h.logical_cpus, with_mhz(h.base_mhz), with_mhz(h.max_mhz),
      with_mhz(h.cpuinfo_mhz), h.measured_ghz);
  y << "software: {jpeg: " << quoted(jpeg_library()) << ", compiler: " << quoted(compiler())
    << ", build: " << quoted(GPUSCALE_BUILD_TYPE) << "}\n";
  y << "date: " << quoted(fmt::format("{:%Y-%m-%d}", fmt::gmtime(std::time(nullptr)))) << "\n";
  y << "method: " << quoted(method) << "\n";
  y << fmt::format(
      "images: {{source: {},\n"
      "         count: {}, mean_width: {:.1f} px, mean_height: {:.1f} px, mean_pixels: {:.4f} MP,\n"
      "         mean_file_size: {:.1f} KB, mean_coefficients: {:.1f} KB}}\n",
      quoted(set.source), jpegs.size(), set.mean_width, set.mean_height, set.mean_megapixels, set.mean_kb,
      set.mean_coefficient_kb);
  y << fmt::format("settings: {{resize: {}, crop: {} px, seed: {}, passes: {}}}\n",
                   s.resize > 0 ? fmt::format("{} px", s.resize) : "none", kCropPx, s.seed, s.reps);
  y << "pipelines:\n";
  for (const auto& r : results) {
    y << "  " << r.name << ":\n    stages: {";
    for (std::size_t i = 0; i < r.stages.size(); ++i)
      y << (i ? ", " : "") << kStageNames[r.stages[i]] << ": " << fmt::format("{:.3f} us", r.stage_us[r.stages[i]]);
    y << fmt::format("}}\n    total: {:.3f} us\n    per_core_rate: {:.1f} img/s\n", r.total_us, 1e6 / r.total_us);
    y << fmt::format("    cycles_per_image: {:.0f}\n", r.total_us * h.measured_ghz * 1e3);  // at measured_clock
    y << "    threads: {";
    for (std::size_t i = 0; i < r.rates.size(); ++i)
      y << (i ? ", " : "") << r.rates[i].first << ": " << fmt::format("{:.1f} img/s", r.rates[i].second);
    y << "}\n";
  }
  std::ofstream out(path);
  if (!(out << y.str())) throw std::runtime_error(path + ": cannot write");
}

struct JitterSettings {
  int batch = 0;  // images per batch; 0: no jitter run
  int batches = 1000;
  int quantiles = 101;
  std::string yaml;
};

// The batch-jitter run: percentiles on stdout and, with a YAML path, the `input:` entry.
void run_batch_jitter(const std::vector<Jpeg>& set, const std::string& images, const std::string& aug,
                      int threads, const Settings& s, const JitterSettings& j, const std::string& cpu) {
  const std::vector<double> seconds = batch_seconds(set, pipeline_named(aug), s, threads, j.batch, j.batches);
  const std::vector<double> factors = factors_over_median(seconds);
  const double median_ms = median(seconds) * 1e3;
  fmt::print("{} batches of {} images ({}), {} threads: median {:.1f} ms per batch\n", j.batches, j.batch, aug,
             threads, median_ms);
  fmt::print("factor = batch time / median:  {}\n", factor_percentiles(factors));
  if (j.yaml.empty()) return;
  const std::string date = fmt::format("{:%Y-%m-%d}", fmt::gmtime(std::time(nullptr)));
  std::ofstream out(j.yaml);
  out << fmt::format(
      "# tools/bench/bench_decode --batch-jitter: the factor (batch time / median) of {} batches of {}\n"
      "# images drawn at random from the set, each decoded and augmented ({}) whole by one of {}\n"
      "# threads; median {:.1f} ms per batch.\n"
      "cpu: {}\ndate: \"{}\"\nimages: {}\n"
      "input: {{distribution: empirical, quantiles: [{}],\n"
      "        source: \"tools/bench/bench_decode --batch-jitter {} --aug {} on {}, {}\"}}\n",
      j.batches, j.batch, aug, threads, median_ms, quoted(cpu), date, quoted(images),
      quantile_list(factors, j.quantiles), j.batch, aug, cpu, date);
  if (!out) throw std::runtime_error(j.yaml + ": cannot write");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"JPEG decode + augmentation cost per image and per core (tools/bench/README.md)"};
  std::string images_dir, yaml, subsampling = "444";
  SyntheticSet synthetic;
  Settings s;
  std::vector<int> threads{1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))};
  std::vector<std::string> augs{"crop-flip"};
  app.add_option("--images", images_dir, "Bench the JPEG files of DIR instead of synthetic ones")
      ->check(CLI::ExistingDirectory);
  app.add_option("--count", synthetic.count, "Images in the set (at most, with --images)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", s.seed, "Seed of the synthetic set and of the random augmentation")->capture_default_str();
  app.add_option("--quality", synthetic.quality, "JPEG quality of the synthetic set")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app.add_option("--subsampling", subsampling, "Chroma subsampling of the synthetic set")
      ->capture_default_str()
      ->check(CLI::IsMember({"420", "444"}));
  app.add_option("--short-side", synthetic.short_side,
                 "Synthetic images resized to this shorter side, as im2rec.py --resize (0: ImageNet's sizes)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--resize", s.resize, "Shorter side after the resize stage, px (0: no resize)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--aug", augs, "Pipelines: crop-flip, mxnet3, dali-host")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::IsMember({"crop-flip", "mxnet3", "dali-host"}));
  app.add_option("--threads", threads, "Thread counts of the scaling runs")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--reps", s.reps, "Timed passes over the set (the median is reported)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--yaml", yaml, "Also write the results to FILE");
  JitterSettings jitter;
  app.add_option("--batch-jitter", jitter.batch,
                 "Time whole batches of this many images instead (the first --aug pipeline, the "
                 "largest --threads count): the spread of one batch's decode")
      ->check(CLI::Range(1, 100000));
  app.add_option("--jitter-batches", jitter.batches, "Batches timed by --batch-jitter")
      ->capture_default_str()
      ->check(CLI::Range(100, 1000000));
  app.add_option("--jitter-quantiles", jitter.quantiles,
                 "Factors in --jitter-yaml, at equally spaced probabilities from 0 to 1")
      ->capture_default_str()
      ->check(CLI::Range(2, 1001));
  app.add_option("--jitter-yaml", jitter.yaml, "Write --batch-jitter's result as a machine file's "
                                               "variability.input entry");
  CLI11_PARSE(app, argc, argv);
  synthetic.subsample = subsampling == "420";

  try {
    const std::vector<Jpeg> set =
        images_dir.empty() ? synthetic_jpegs(synthetic) : load_jpegs(images_dir, synthetic.count);
    const Host host = describe_host();
    const std::string sizes =
        synthetic.short_side ? fmt::format("shorter side {} px", synthetic.short_side) : "ImageNet sizes [?]";
    const std::string source = images_dir.empty()
                                   ? fmt::format("synthetic (seed {}, quality {}, {}, {})", synthetic.seed,
                                                 synthetic.quality, synthetic.subsample ? "4:2:0" : "4:4:4", sizes)
                                   : images_dir;
    const SetSummary summary = summarise(set, source);
    fmt::print("{} JPEGs: {}\n  mean {:.0f}x{:.0f} px, {:.3f} MP, {:.1f} KB per file (ImageNet train: ~110 KB)\n",
               set.size(), source, summary.mean_width, summary.mean_height, summary.mean_megapixels, summary.mean_kb);
    fmt::print("CPU: {} (family {}, model {}), {} logical CPUs, clock measured {:.2f} GHz; {}\n", host.cpu,
               host.family, host.model, host.logical_cpus, host.measured_ghz, jpeg_library());
    if (jitter.batch > 0) {
      run_batch_jitter(set, source, augs.front(), *std::max_element(threads.begin(), threads.end()), s, jitter,
                       host.cpu);
      return 0;
    }

    std::vector<PipelineResult> results;
    for (const std::string& aug : augs) {
      results.push_back(time_one_thread(set, aug, s));
      for (int t : threads) results.back().rates.emplace_back(t, images_per_second(set, pipeline_named(aug), s, t));
    }
    print_table(results);

    const std::string method = fmt::format(
        "one untimed pass, then the median of {} passes over the set, each image once per pass, decoded "
        "from memory; stage times: steady_clock laps around each stage of each image on one thread, "
        "averaged over the set; threads: N threads take images from the set in turn, images/s from the "
        "pass's wall time; measured_clock: the fastest of 5 chains of 2e8 dependent additions (one per cycle)",
        s.reps);
    if (!yaml.empty()) write_yaml(yaml, host, summary, set, s, method, results);
  } catch (const std::exception& e) {
    std::cerr << "bench_decode: " << e.what() << "\n";
    return 1;
  }
}
