// `gpuscale run` as a user runs it: the issue's JSON fields, the same input giving the same bytes,
// and bad input (one line, exit status 2).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

using testing::run_command;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

TEST(CliRun, Dgx1ResNet50JsonHasTheIssuesFields) {
  const std::string command = kGpuscale +
      " run --topology dgx1-v100 --workload resnet-50 --gpus 1,2,4,8 --comm p2p,nccl --format json";
  const auto r = run_command(command);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 8u);
  for (const auto& row : j["results"]) {
    for (const char* key : {"topology", "workload", "comm", "gpus", "batch", "scaling", "iteration_s",
                            "epoch_s", "speedup", "throughput_img_s", "fpbp_s", "wu_s",
                            "exposed_comm_s", "memory_gpu0_gb", "memory_max_other_gb",
                            "gpu_memory_gb", "efficiency", "link_utilisation", "spatial"}) {
      EXPECT_TRUE(row.contains(key)) << key;
    }
    EXPECT_GT(row["iteration_s"].get<double>(), 0);
    if (row["gpus"] == 1) {
      EXPECT_DOUBLE_EQ(row["speedup"].get<double>(), 1.0);
    }
  }
  EXPECT_EQ(run_command(command).out, r.out);  // same input, same bytes
}

TEST(CliRun, EveryShippedFrameworkRunsAndHoldsItsExchangeBuffers) {
  std::map<std::string, double> gpu0_gb;
  for (const char* framework : {"mxnet", "pytorch-ddp", "pytorch-horovod"}) {
    const auto r = run_command(kGpuscale + " run --framework " + framework +
                               " --workload lenet --gpus 1,2 --batch 16 --comm nccl --format json");
    ASSERT_EQ(r.status, 0) << framework << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["results"].size(), 2u) << framework;
    EXPECT_GT(j["results"][1]["iteration_s"].get<double>(), 0) << framework;
    gpu0_gb[framework] = j["results"][1]["memory_gpu0_gb"].get<double>();
    EXPECT_EQ(run_command(kGpuscale + " workload show lenet --gpus 2 --comm nccl --framework " + framework).status, 0);
  }
  // Same context and model: DDP's buckets hold every gradient again (LeNet: 70,753,070 x 4 B),
  // Horovod one 64 MiB fusion buffer.
  EXPECT_NEAR(gpu0_gb["pytorch-ddp"] - gpu0_gb["pytorch-horovod"], (70753070.0 * 4 - 64.0 * 1024 * 1024) / 1e9, 1e-3);
}

// --precision as a user runs it: NVIDIA's published PyTorch configuration of ResNet-50 in mixed
// precision (batch 256 on a 16 GB V100) fits under native AMP and not in FP32; AMP is faster; and
// DDP's buckets on 2 GPUs hold FP32 gradients under AMP, FP16 ones under apex O2 (fp16).
TEST(CliRun, PrecisionRecipesRunAsTheFrameworkRunsThem) {
  const std::string base = kGpuscale +
      " run --framework pytorch-ddp --workload resnet-50 --gpus 1 --batch 256 --comm nccl "
      "--without input --format json";
  const auto fp32 = run_command(base);
  const auto amp = run_command(base + " --precision amp");
  ASSERT_EQ(fp32.status, 0) << fp32.err;
  ASSERT_EQ(amp.status, 0) << amp.err;
  const auto f = nlohmann::json::parse(fp32.out)["results"][0];
  const auto a = nlohmann::json::parse(amp.out)["results"][0];
  EXPECT_FALSE(f["fits_memory"].get<bool>());
  EXPECT_TRUE(a["fits_memory"].get<bool>());
  EXPECT_GT(a["throughput_img_s"].get<double>(), 2 * f["throughput_img_s"].get<double>());
  // MXNet's --dtype float16 at NVIDIA's batch of 208 fits a 16 GB V100 too (15.2 GB: FP16
  // activations, the residual sums in place).
  const auto mxnet = run_command(kGpuscale +
      " run --framework mxnet --workload resnet-50 --gpus 1 --batch 208 --comm nccl "
      "--without input --format json --precision fp16");
  ASSERT_EQ(mxnet.status, 0) << mxnet.err;
  EXPECT_TRUE(nlohmann::json::parse(mxnet.out)["results"][0]["fits_memory"].get<bool>());

  const std::string pair = kGpuscale +
      " run --framework pytorch-ddp --workload lenet --gpus 2 --batch 16 --comm nccl --format json";
  const auto native = run_command(pair + " --precision amp");
  const auto o2 = run_command(pair + " --precision fp16");
  ASSERT_EQ(native.status, 0) << native.err;
  ASSERT_EQ(o2.status, 0) << o2.err;
  // Per LeNet parameter (70,753,070, nearly all of them cast weights): AMP keeps weights 4 + their
  // FP16 casts 2, gradients 4, momentum 4 and buckets 4 = 18 bytes; apex O2 weights 2, gradients
  // 2 + FP32 master gradients 4, master 4 + momentum 4 and buckets 2 = 18 bytes: equal, though
  // not one part is.
  const auto native_row = nlohmann::json::parse(native.out)["results"][0];
  const auto o2_row = nlohmann::json::parse(o2.out)["results"][0];
  EXPECT_NEAR(native_row["memory_gpu0_gb"].get<double>(), o2_row["memory_gpu0_gb"].get<double>(),
              1e-3);

  const auto refused = run_command(kGpuscale + " run --workload lenet --gpus 1 --precision amp");
  EXPECT_EQ(refused.status, 2);
  EXPECT_THAT(refused.err, ::testing::HasSubstr("framework mxnet cannot train at precision amp"));
  EXPECT_TRUE(refused.out.empty());
}

TEST(CliRun, UnknownMethodOrTooManyGpusIsOneLineAndExitTwo) {
  for (const char* args : {" run --comm rnig", " run --gpus 16"}) {
    const auto r = run_command(kGpuscale + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(CliRun, AMistypedFlagIsNamedWithTheFlagMeant) {
  for (const auto& [args, meant] : {std::pair{" run --gpu 8", "'--gpus'"},
                                    std::pair{" run --gpus=2 --bacth 16", "'--batch'"},
                                    std::pair{" topo route --bites 1MiB", "'--bytes'"}}) {
    const auto r = run_command(kGpuscale + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, ::testing::HasSubstr("unknown option")) << args;
    EXPECT_THAT(r.err, ::testing::HasSubstr(std::string("did you mean ") + meant)) << r.err;
  }
}

TEST(CliRun, AGpuCountThatDoesNotFitSaysWhichCountsDo) {
  const auto machine = run_command(kGpuscale + " run --gpus 16");
  EXPECT_EQ(machine.status, 2);
  EXPECT_THAT(machine.err, ::testing::HasSubstr("it has 8 GPUs, so use 1 to 8")) << machine.err;
  const auto cluster = run_command(kGpuscale + " run --topology lassen --gpus 6");
  EXPECT_EQ(cluster.status, 2);
  EXPECT_THAT(cluster.err, ::testing::HasSubstr("1 to 4 GPUs of one node or whole nodes of 4 GPUs, "
                                              "so use 4 or 8")) << cluster.err;
  EXPECT_THAT(cluster.err, ::testing::Not(::testing::HasSubstr("at most"))) << cluster.err;
}

TEST(CliRun, AConfigurationThatDoesNotFitItsGpusIsMarkedWarnedAndWithStrictAnError) {
  const std::string base = kGpuscale + " run --workload resnet-50 --gpus 1 --comm nccl --without input";
  const auto fits = run_command(base + " --batch 16 --format json");
  ASSERT_EQ(fits.status, 0) << fits.err;
  EXPECT_TRUE(nlohmann::json::parse(fits.out)["results"][0]["fits_memory"].get<bool>());
  EXPECT_THAT(fits.err, ::testing::Not(::testing::HasSubstr("warning")));

  const auto json = run_command(base + " --batch 4096 --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  const auto row = nlohmann::json::parse(json.out)["results"][0];
  EXPECT_FALSE(row["fits_memory"].get<bool>());
  EXPECT_GT(row["memory_gpu0_gb"].get<double>(), row["gpu_memory_gb"].get<double>());
  EXPECT_DOUBLE_EQ(row["gpu_memory_gb"].get<double>(), 16.0);  // dgx1-v100's V100s
  EXPECT_THAT(json.err, ::testing::HasSubstr("warning: resnet-50 nccl 1 GPUs batch 4096 needs"));

  const auto table = run_command(base + " --batch 4096");
  EXPECT_THAT(table.out, ::testing::HasSubstr(" fits\n"));
  EXPECT_THAT(table.out, ::testing::HasSubstr(" NO\n"));
  const auto csv = run_command(base + " --batch 4096 --format csv");
  EXPECT_THAT(csv.out, ::testing::HasSubstr(",gpu_memory_gb,fits_memory,max_link_utilisation\n"));
  EXPECT_THAT(csv.out, ::testing::HasSubstr(",16,false,0\n"));

  const auto strict = run_command(base + " --batch 4096 --strict");
  EXPECT_EQ(strict.status, 2);
  EXPECT_TRUE(strict.out.empty());  // nothing half-written
  EXPECT_THAT(strict.err, ::testing::HasSubstr("--strict: resnet-50 nccl 1 GPUs batch 4096 needs"));
}

// What GPU0's kernels say about Horovod's fused allreduces in a run's --events.
struct FusionEvents {
  std::vector<double> iteration_starts_s;  // each iteration's first forward kernel
  // Each copy into the fusion buffer: the start of a fused allreduce.
  std::vector<double> buffer_bytes, buffer_starts_s;
  std::vector<double> backward_ends_s;  // each backward kernel's end
  int iterations() const { return static_cast<int>(iteration_starts_s.size()); }
};

FusionEvents fusion_events(const std::string& events) {
  FusionEvents out;
  std::istringstream lines(testing::file_bytes(events));
  std::string line;
  std::getline(lines, line);  // workload,comm,gpus,batch,track,category,name,layer,algorithm,...
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string field; std::getline(fields, field, ',');) f.push_back(field);
    if (f.size() < 12 || f[4] != "gpu0 kernels") continue;
    const double start = std::stod(f[10]), end = std::stod(f[11]);
    if (f[6] == "copy into fusion buffer") {
      out.buffer_bytes.push_back(std::stod(f[9]));
      out.buffer_starts_s.push_back(start);
    } else if (f[5] == "backward") {
      out.backward_ends_s.push_back(end);
    } else if (f[6] == "fwd conv1") {
      out.iteration_starts_s.push_back(start);
    }
  }
  return out;
}

// How many of the buffers start exactly as one of GPU0's backward kernels ends.
size_t starts_at_a_backward_end(const FusionEvents& e) {
  return static_cast<size_t>(
      std::count_if(e.buffer_starts_s.begin(), e.buffer_starts_s.end(), [&](double start) {
        return std::any_of(e.backward_ends_s.begin(), e.backward_ends_s.end(),
                           [&](double end) { return std::abs(end - start) < 1e-12; });
      }));
}

// Horovod's background thread wakes every 5 ms, so every fused allreduce starts on a tick (its
// copy into the fusion buffer, in --events; the negotiation before it is left out here, the next
// test has it); a cycle of 0 (the thread never sleeps) lets the
// machine show: each exchange starts once its gradients are ready, and the iteration is shorter.
TEST(CliRun, AFusionCycleOfZeroRemovesTheTickAndOutputsNameTheExchange) {
  struct Run {
    double iteration_s;
    std::string exchange;
    std::vector<double> fusion_starts_s;  // GPU0's copies into the fusion buffer
  };
  auto run = [](const std::string& args) {
    const std::string events = testing::temp_prefix("fusion-events") + ".csv";
    const auto r = run_command(kGpuscale + " run --framework mxnet --workload resnet-50 --gpus 8 "
                               "--batch 32 --comm nccl --without input,coordination --format json "
                               "--events " + events + " " + args);
    EXPECT_EQ(r.status, 0) << r.err;
    const auto row = nlohmann::json::parse(r.out)["results"][0];
    Run out{row["iteration_s"].get<double>(), row["exchange"].get<std::string>(), {}};
    out.fusion_starts_s = fusion_events(events).buffer_starts_s;
    return out;
  };
  auto on_grid = [](double t) {
    const double cycles = t / 5e-3;
    return std::abs(cycles - std::round(cycles)) < 1e-6;
  };
  const Run ticked = run("");
  EXPECT_EQ(ticked.exchange, "mxnet: horovod fusion 64 MiB every 5 ms");
  ASSERT_FALSE(ticked.fusion_starts_s.empty());
  for (double t : ticked.fusion_starts_s) EXPECT_TRUE(on_grid(t)) << t;
  const Run free = run("--fusion-cycle-ms 0");
  EXPECT_EQ(free.exchange, "mxnet: horovod fusion 64 MiB with no cycle");
  EXPECT_LT(free.iteration_s, ticked.iteration_s);
  // Without the tick, two machines no longer give the same iteration.
  EXPECT_NE(run("--fusion-cycle-ms 0 --topology lassen").iteration_s, free.iteration_s);

  const std::string file = testing::write_temp_file("no-cycle.yaml", "workload: lenet\ngpus: 2\n"
                                                                     "comm: nccl\nfusion_cycle_ms: 0\n");
  const auto table = run_command(kGpuscale + " run " + file + " --comm nccl,p2p");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_THAT(table.out, ::testing::HasSubstr("exchange: nccl = mxnet: horovod fusion 64 MiB with no cycle\n"));
  EXPECT_THAT(table.out, ::testing::HasSubstr("exchange: p2p = mxnet: kvstore=device per key\n"));
  const auto csv = run_command(kGpuscale + " run " + file + " --format csv");
  EXPECT_THAT(csv.out, ::testing::HasSubstr("comm,exchange,framework,precision,routing"));
  EXPECT_THAT(csv.out, ::testing::HasSubstr(",nccl,mxnet: horovod fusion 64 MiB with no cycle,"
                                            "mxnet,fp32,default,"));
}

// Horovod negotiates each cycle's ready tensors before it allreduces them: with every tensor
// cached, one allreduce of the response cache's bit vector, 3 status bits and one per tensor
// (ResNet-50's 161) in 64-bit words, 24 bytes, by recursive doubling. So a cycle's first fused
// allreduce starts that collective's time after its tick, the time `gpuscale collective` gives it
// on the same GPUs; without the mechanism it starts on the tick. (MXNet's Horovod, whose engine
// hands a gradient over once it is computed: the tick finds its buffers' gradients ready.)
TEST(CliRun, HorovodNegotiatesEachCycleBeforeItsAllreduces) {
  auto fusion_starts = [](const std::string& args) {
    const std::string events = testing::temp_prefix("negotiation-events") + ".csv";
    const auto r = run_command(kGpuscale + " run --workload resnet-50 --gpus 2 --batch 32 "
                               "--framework mxnet --comm nccl --without input "
                               "--events " + events + " " + args);
    EXPECT_EQ(r.status, 0) << r.err;
    return fusion_events(events).buffer_starts_s;
  };
  const auto collective = run_command(kGpuscale + " collective --algo recursive_doubling "
                                      "--gpus 2 --bytes 24 --format json");
  ASSERT_EQ(collective.status, 0) << collective.err;
  const double negotiation =
      nlohmann::json::parse(collective.out)["results"][0]["time_s"].get<double>();
  ASSERT_GT(negotiation, 0);
  // A cycle's first buffer starts on its tick (a later one when the allreduce before it ends),
  // so the ticks' phase is the first start's, in the run without negotiation.
  const std::vector<double> without = fusion_starts("--without coordination");
  ASSERT_FALSE(without.empty());
  const double phase = std::fmod(without.front(), 5e-3);
  auto count_after_tick = [&](const std::vector<double>& starts, double offset) {
    return std::count_if(starts.begin(), starts.end(), [&](double t) {
      const double after = std::fmod(t - phase + 1e-12, 5e-3) - 1e-12;
      return std::abs(after - offset) < 1e-9;
    });
  };
  const auto on_ticks = count_after_tick(without, 0);
  EXPECT_GE(on_ticks, 10);
  const std::vector<double> with = fusion_starts("");
  EXPECT_EQ(count_after_tick(with, negotiation), on_ticks);
  EXPECT_EQ(count_after_tick(with, 0), 0);
}

// PyTorch's gradient hook hands a gradient to Horovod once backward's kernels for it are issued,
// long before the GPU has run them, so a tick finds most of ResNet-50's 102 MB handed over and
// packs it into a full 64 MiB buffer and the rest; the thread then waits on the host for each
// buffer's gradients, so a buffer starts as a backward kernel ends, not on a tick. MXNet's engine
// hands a gradient over once it is written: a buffer every few ticks, a few megabytes each; and
// so does PyTorch with the mechanism left out (`--without handover`).
TEST(CliRun, PytorchHandsHorovodFullBuffersThatStartOnceTheirGradientsAreComputed) {
  auto fusion = [](const std::string& framework, const std::string& without = "") {
    const std::string events = testing::temp_prefix("handover-events") + ".csv";
    const auto r = run_command(kGpuscale + " run --workload resnet-50 --gpus 2 --batch 32 "
                               "--comm nccl --without input,coordination" + without +
                               " --framework " + framework + " --events " + events);
    EXPECT_EQ(r.status, 0) << r.err;
    return fusion_events(events);
  };
  constexpr double kMiB = 1 << 20;
  const FusionEvents pytorch = fusion("pytorch-horovod");
  ASSERT_GT(pytorch.iterations(), 1);
  const auto per_iteration = [](const FusionEvents& e) {
    return static_cast<double>(e.buffer_bytes.size()) / e.iterations();
  };
  // Two buffers an iteration, three where the handover straddles a tick.
  EXPECT_LE(per_iteration(pytorch), 3);
  EXPECT_GE(*std::max_element(pytorch.buffer_bytes.begin(), pytorch.buffer_bytes.end()),
            60 * kMiB);
  // Every buffer starts as a backward kernel ends, the one holding the last layer too: the
  // optimizer's per-key host work after backward() has no part in the exchange.
  EXPECT_EQ(starts_at_a_backward_end(pytorch), pytorch.buffer_starts_s.size());

  const FusionEvents mxnet = fusion("mxnet");
  EXPECT_GT(per_iteration(mxnet), 2 * per_iteration(pytorch));
  EXPECT_LT(*std::max_element(mxnet.buffer_bytes.begin(), mxnet.buffer_bytes.end()), 32 * kMiB);
  EXPECT_GT(per_iteration(fusion("pytorch-horovod", ",handover")), 2 * per_iteration(pytorch));
}

// DDP's reducer allreduces a bucket from autograd's hooks once its last gradient is computed,
// strictly in bucket order; the Python thread's optimizer.step() and zero_grad() (35 us per
// parameter) come after backward() returns and have no part in it. So on an H100, whose mixed-
// precision backward of ResNet-50 at batch 32 is shorter than that host work, every bucket
// starts as a backward kernel ends, the first of each iteration well before backward ends.
TEST(CliRun, DdpStartsEachBucketAsItsLastGradientIsComputedWhateverThePythonThreadDoes) {
  const std::string events = testing::temp_prefix("ddp-events") + ".csv";
  const auto r = run_command(kGpuscale + " run --workload resnet-50 --topology dgx-h100 --gpus 2 "
                             "--batch 32 --precision amp --framework pytorch-ddp --comm nccl "
                             "--without input --events " + events);
  ASSERT_EQ(r.status, 0) << r.err;
  const FusionEvents ddp = fusion_events(events);
  ASSERT_GT(ddp.iterations(), 1);
  ASSERT_GE(ddp.buffer_starts_s.size(), static_cast<size_t>(2 * ddp.iterations()));
  EXPECT_EQ(starts_at_a_backward_end(ddp), ddp.buffer_starts_s.size());
  // In each iteration, the first bucket starts over a millisecond before backward's last kernel
  // ends.
  for (size_t i = 0; i < ddp.iteration_starts_s.size(); ++i) {
    const double from = ddp.iteration_starts_s[i];
    const double to = i + 1 < ddp.iteration_starts_s.size() ? ddp.iteration_starts_s[i + 1]
                                                            : std::numeric_limits<double>::max();
    auto within = [&](double t) { return t >= from && t < to; };
    const auto first_bucket =
        std::find_if(ddp.buffer_starts_s.begin(), ddp.buffer_starts_s.end(), within);
    ASSERT_NE(first_bucket, ddp.buffer_starts_s.end()) << "iteration " << i;
    double backward_end = 0;
    for (double end : ddp.backward_ends_s) {
      if (within(end)) backward_end = std::max(backward_end, end);
    }
    EXPECT_LT(*first_bucket, backward_end - 1e-3) << "iteration " << i;
  }
}

// A run's JSON lists each steady iteration's gradient allreduces (`allreduce_mb`): DDP's buckets,
// Horovod's fused buffers, or each tensor alone; every byte of ResNet-50's FP32 gradients (its
// 25,557,032 parameters) is in exactly one, so every method sends 102.228128 MB an iteration. A
// kvstore sends no allreduce.
TEST(CliRun, TheAllreducesOfAnIterationCarryEachGradientByteOnce) {
  // Each steady iteration's allreduces, in MB.
  auto iterations_of = [](const std::string& args) {
    const auto r = run_command(kGpuscale + " run --workload resnet-50 --gpus 2 --batch 32 "
                               "--without input --format json " + args);
    EXPECT_EQ(r.status, 0) << r.err;
    const auto row = nlohmann::json::parse(r.out)["results"][0];
    return row["allreduce_mb"].get<std::vector<std::vector<double>>>();
  };
  auto sizes = [&](const std::string& args) {
    const auto iterations = iterations_of(args);
    EXPECT_GE(iterations.size(), 2u);
    for (const std::vector<double>& mb : iterations) {
      EXPECT_NEAR(std::accumulate(mb.begin(), mb.end(), 0.0), 4 * 25557032 / 1e6, 1e-9) << args;
    }
    // The last iteration's.
    return iterations.empty() ? std::vector<double>{} : iterations.back();
  };
  const auto ddp = sizes("--framework pytorch-ddp --comm nccl");
  const auto fused = sizes("--framework pytorch-horovod --comm nccl");
  const auto per_tensor = sizes("--framework pytorch-horovod --comm nccl --fusion-mb 0");
  // MXNet hands a gradient to Horovod once computed: more, smaller buffers.
  const auto mxnet = sizes("--framework mxnet --comm nccl");
  EXPECT_EQ(per_tensor.size(), 161u);  // ResNet-50's weight and bias tensors
  EXPECT_LT(fused.size(), ddp.size());  // 64 MiB buffers against 25 MiB buckets
  EXPECT_GT(mxnet.size(), fused.size());
  for (double mb : fused) EXPECT_LE(mb * 1e6, 64.0 * (1 << 20));
  const auto p2p = iterations_of("--framework mxnet --comm p2p");
  EXPECT_GE(p2p.size(), 2u);
  for (const std::vector<double>& mb : p2p) EXPECT_TRUE(mb.empty());
}

// The table's FP+BP, WU, input and rest make the iteration. MXNet issues a forward segment only
// once its weights are in, so no forward overlaps the exchange and the rest (the GPU waiting for
// the host) is never negative; PyTorch issues ahead, and its forward may overlap the exchange.
TEST(CliRun, TheColumnsMakeTheIterationAndOnlyAForwardOverlappingWuMakesTheRestNegative) {
  auto rows = [](const std::string& args) {
    const auto r = run_command(kGpuscale + " run --workload lenet,resnet-50 --gpus 1,2,8 "
                               "--batch 16 --format json " + args);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out)["results"];
  };
  for (const auto& row : rows("--comm p2p,nccl_reduce_bcast,nccl --framework mxnet")) {
    const double sum = row["fpbp_s"].get<double>() + row["wu_s"].get<double>() +
                       row["input_wait_s"].get<double>() + row["rest_s"].get<double>();
    EXPECT_NEAR(sum, row["iteration_s"].get<double>(), 1e-9) << row.dump();
    EXPECT_EQ(row["overlap_s"].get<double>(), 0) << row.dump();
    EXPECT_GE(row["rest_s"].get<double>(), 0) << row.dump();
    EXPECT_LE(row["fpbp_s"].get<double>(), row["iteration_s"].get<double>()) << row.dump();
  }
  double ddp_overlap = 0;
  for (const auto& row : rows("--comm p2p,nccl --framework pytorch-ddp")) {
    ddp_overlap = std::max(ddp_overlap, row["overlap_s"].get<double>());
  }
  EXPECT_GT(ddp_overlap, 0);
  const auto table = run_command(kGpuscale + " run --workload lenet --gpus 2 --batch 16");
  EXPECT_THAT(table.out, ::testing::HasSubstr("iter ms = FP+BP + WU + input + rest"));
  EXPECT_THAT(table.out, ::testing::HasSubstr(" rest ms "));
}

// `--comm aluminum` is NCCL's ring below 64 GPUs; at 256, ResNet-50's gradients of at most
// 128 KiB go through MPI's recursive doubling or Rabenseifner, between ranks the ring never joins
// (the run routes them), and stop paying the ring's latency of 2(p-1) steps each. (At 64 both
// hide under backward.)
TEST(CliRun, AluminumIsNcclBelow64GpusAndCutsSmallAllreducesAt256) {
  const auto r = run_command(kGpuscale + " run --topology lassen --framework pytorch-horovod "
                             "--workload resnet-50 --gpus 16,256 --comm nccl,aluminum "
                             "--fusion-mb 0 --iterations 2 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json results = nlohmann::json::parse(r.out)["results"];
  std::map<std::pair<std::string, int>, double> wu_s;
  for (const auto& row : results) {
    wu_s[{row["comm"].get<std::string>(), row["gpus"].get<int>()}] = row["wu_s"].get<double>();
  }
  ASSERT_EQ(wu_s.size(), 4u);
  EXPECT_EQ((wu_s[{"aluminum", 16}]), (wu_s[{"nccl", 16}]));
  EXPECT_LT((wu_s[{"aluminum", 256}]), (wu_s[{"nccl", 256}]) / 2);
}

// A configuration that takes the simulator minutes says so before the wait; one evaluated from
// link loads says nothing and completes (a 60 s timeout only guards against a hang).
TEST(CliRun, AConfigurationThatTakesMinutesSaysSoFirst) {
  // ResNet-50 on `gpus` of Lassen's GPUs, stopped after `seconds`.
  auto run_on_lassen = [](int seconds, int gpus, const std::string& comm,
                          const std::string& framework) {
    return run_command(fmt::format("timeout {} {} run --topology lassen --gpus {} --comm {} "
                                   "--workload resnet-50 --framework {}",
                                   seconds, kGpuscale, gpus, comm, framework));
  };
  auto expect_quiet = [](const testing::CommandResult& r, const std::string& what) {
    EXPECT_EQ(r.status, 0) << what << ": " << r.err;
    EXPECT_THAT(r.err, ::testing::Not(::testing::HasSubstr("minutes"))) << what;
  };
  // MXNet's kvstore=device: per-key copies over the whole fabric, still simulating at 3 s.
  const auto kvstore = run_on_lassen(3, 1000, "p2p", "mxnet");
  EXPECT_EQ(kvstore.status, 124);
  EXPECT_THAT(kvstore.err, ::testing::HasSubstr("warning: p2p on 1000 GPUs takes the simulator "
                                                "about 17 minutes"));
  expect_quiet(run_command(kGpuscale + " run --topology lassen --gpus 16 --comm p2p "
                                       "--workload lenet --batch 16"),
               "kvstore=device on 16 GPUs");
  // Above 16 GPUs its copies still run flow by flow, their pairs routed on the platform.
  expect_quiet(run_on_lassen(60, 32, "p2p", "mxnet"), "kvstore=device on 32 GPUs");
  // An allreduce by the p2p algorithm is evaluated from its link loads, as rings are.
  expect_quiet(run_on_lassen(60, 1000, "p2p", "pytorch-ddp"), "p2p allreduce");
  // MPICH's recursive doubling is lock-step on a power of two ranks only: off one, at thousands
  // of GPUs, the user hears why it is slow and what is not.
  const auto folded = run_on_lassen(3, 3000, "recursive_doubling", "pytorch-ddp");
  EXPECT_EQ(folded.status, 124);
  EXPECT_THAT(folded.err, ::testing::HasSubstr("warning: recursive_doubling on 3000 GPUs is "
                                               "simulated flow by flow"));
  expect_quiet(run_on_lassen(60, 2048, "recursive_doubling", "pytorch-ddp"),
               "recursive doubling on a power of two");
  // NCCL's own choice, which needs the machine to build, is lock-step whatever it picks.
  expect_quiet(run_on_lassen(60, 3000, "nccl_auto", "pytorch-ddp"), "nccl_auto");
}

TEST(CliRun, CsvQuotesAFieldHoldingACommaOrAQuote) {
  const std::string machine = testing::write_temp_file(
      "comma-machine.yaml", "base: dgx1-v100\nname: 'dgx1, \"fast\" links'\n");
  const auto r = run_command(kGpuscale + " run --topology " + machine +
                             " --workload lenet --gpus 1 --batch 16 --comm nccl --format csv");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string row = r.out.substr(r.out.find('\n') + 1);
  EXPECT_TRUE(row.starts_with("\"dgx1, \"\"fast\"\" links\",lenet,nccl,")) << row;
  EXPECT_NE(row.find(",strong,1,16,"), std::string::npos) << row;
}

TEST(CliRun, ExperimentFileGivesWhatItsFlagsGiveAndFlagsOverrideIt) {
  const std::string file = testing::write_temp_file("lenet-study.yaml",
                                                    "topology: dgx1-v100\n"
                                                    "workload: lenet\n"
                                                    "gpus: [1, 4]\n"
                                                    "batch: 16\n"
                                                    "comm: [p2p, nccl_reduce_bcast]\n"
                                                    "images: 256000\n");
  const std::string flags = " --topology dgx1-v100 --workload lenet --batch 16 "
                            "--comm p2p,nccl_reduce_bcast --images 256000 --format json";
  const auto from_file = run_command(kGpuscale + " run " + file + " --format json");
  ASSERT_EQ(from_file.status, 0) << from_file.err;
  EXPECT_EQ(from_file.out, run_command(kGpuscale + " run" + flags + " --gpus 1,4").out);
  const auto overridden = run_command(kGpuscale + " run " + file + " --gpus 2 --format json");
  ASSERT_EQ(overridden.status, 0) << overridden.err;
  EXPECT_EQ(overridden.out, run_command(kGpuscale + " run" + flags + " --gpus 2").out);
}

// LeNet on 8 GPUs waits for MXNet's decode threads (128 images of 9.26 ms each per batch, over 4
// threads: 296 ms): twice the threads, half the iteration; a file's decode_threads does the same.
TEST(CliRun, DecodeThreadsSetTheRateOfADecodeBoundIteration) {
  const std::string args =
      " run --workload lenet --gpus 8 --batch 16 --comm nccl_reduce_bcast --format json";
  const auto iteration_s = [](const testing::CommandResult& r) {
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out)["results"][0]["iteration_s"].get<double>();
  };
  const double four = iteration_s(run_command(kGpuscale + args));
  EXPECT_NEAR(four, 128 * 9.26e-3 / 4, 1e-3);
  EXPECT_NEAR(iteration_s(run_command(kGpuscale + args + " --decode-threads 8")), four / 2, 1e-3);
  const std::string file = testing::write_temp_file("eight-threads.yaml", "decode_threads: 8\n");
  const std::string flags = args.substr(std::string(" run").size());
  EXPECT_NEAR(iteration_s(run_command(kGpuscale + " run " + file + flags)), four / 2, 1e-3);
  EXPECT_EQ(run_command(kGpuscale + args + " --decode-threads 0").status, 2);
}

TEST(CliRun, ExperimentFileErrorsNameTheFileAndLine) {
  const std::string file = testing::write_temp_file("typo.yaml", "workload: lenet\ngpu: [1, 2]\n");
  const auto r = run_command(kGpuscale + " run " + file);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_THAT(r.err, ::testing::HasSubstr("typo.yaml:2"));
  EXPECT_THAT(r.err, ::testing::HasSubstr("gpus"));  // the hint
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CliRun, AGpuCountOfAnExperimentFileThatDoesNotFitFailsAtItsLineBeforeAnyRun) {
  const std::string file = testing::write_temp_file(
      "too-many.yaml", "topology: dgx1-v100\nworkload: lenet\ncomm: nccl\nbatch: 16\n"
                       "iterations: 2\ngpus:\n  - 1\n  - 16\n");
  const auto r = run_command(kGpuscale + " run " + file);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  // No progress line: the 1-GPU run is not simulated first.
  EXPECT_EQ(r.err, file + ":8: 16 GPUs do not fit 'dgx1-v100': it has 8 GPUs, so use 1 to 8\n");
}

TEST(CliRun, AnExperimentFilesWorkloadPathIsTakenFromItsFolder) {
  testing::write_temp_file("relative-tiny.yaml",
                           "name: tiny\ndataset: synthetic\ninput: {channels: 3, height: 8, "
                           "width: 8}\nlayers:\n  - fc: {outputs: 10}\n  - softmax\n");
  const std::string file = testing::write_temp_file(
      "relative-experiment.yaml", "workload: relative-tiny.yaml\ngpus: 1\ncomm: nccl\n"
                                  "batch: 4\nimages: 100\niterations: 2\n");
  // Run from elsewhere: the path is the experiment file's, not the working folder's.
  const auto r = run_command("cd / && " + kGpuscale + " run " + file + " --format csv");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("relative-tiny.yaml,nccl,")) << r.out;
}

// So is a dataset its `set:` names: an epoch of the dataset beside it, 100 samples, 25
// iterations of 4.
TEST(CliRun, AnExperimentFilesDatasetOverrideIsTakenFromItsFolder) {
  testing::write_temp_file("relative-dataset.yaml",
                           "name: relative-dataset\ndescription: d\nsamples: 100\nunit: images\n");
  const std::string file = testing::write_temp_file(
      "relative-dataset-experiment.yaml",
      "workload: lenet\nset: [workload.dataset=relative-dataset.yaml]\ngpus: 1\ncomm: nccl\n"
      "batch: 4\niterations: 2\n");
  const auto r = run_command("cd / && " + kGpuscale + " run " + file + " --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto row = nlohmann::json::parse(r.out)["results"][0];
  EXPECT_NEAR(row["epoch_s"].get<double>(),
              row["setup_s"].get<double>() + 25 * row["iteration_s"].get<double>(),
              1e-9 * row["epoch_s"].get<double>());
}

TEST(CliRun, AnExperimentFilesSetEntryIsBlamedAtItsLine) {
  const std::string file = testing::write_temp_file(
      "bad-set.yaml", "workload: lenet\nset:\n  - link_kinds.nvlink.lanes=2\n");
  const auto r = run_command(kGpuscale + " run " + file);
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, ::testing::StartsWith(file + ":3: unknown key 'lanes'")) << r.err;
}

// Without --framework each workload runs under the framework its file names (resnet-50:
// torchvision's, so PyTorch DDP; lenet: MXNet's example symbol), and every row says which and at
// what precision; --framework runs them all under one.
TEST(CliRun, EachWorkloadRunsUnderItsPublishedFrameworkUnlessOneIsGiven) {
  const std::string base = kGpuscale + " run --workload resnet-50,lenet --gpus 1 --batch 16 "
                                       "--comm nccl --format json";
  const auto own = run_command(base);
  ASSERT_EQ(own.status, 0) << own.err;
  const auto rows = nlohmann::json::parse(own.out)["results"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["framework"], "pytorch-ddp");
  EXPECT_EQ(rows[1]["framework"], "mxnet");
  EXPECT_EQ(rows[0]["precision"], "fp32");
  EXPECT_THAT(rows[0]["exchange"].get<std::string>(), ::testing::StartsWith("pytorch-ddp: "));
  const auto one = run_command(base + " --framework mxnet");
  ASSERT_EQ(one.status, 0) << one.err;
  // Named, not iterated as a temporary: a range over a temporary's member dangles in C++20.
  const auto forced = nlohmann::json::parse(one.out);
  for (const auto& row : forced["results"]) EXPECT_EQ(row["framework"], "mxnet");
  const auto table = run_command(kGpuscale + " run --workload resnet-50,lenet --gpus 1 --comm nccl");
  EXPECT_THAT(table.out, ::testing::HasSubstr("framework: pytorch-ddp, mxnet; precision: fp32\n"));
}

// A global batch is shared by the GPUs: each count runs its share, and samples per second are
// the global batch over the iteration.
TEST(CliRun, AGlobalBatchIsSharedByTheGpus) {
  const auto r = run_command(kGpuscale + " run --workload lenet --gpus 1,2,4 --global-batch 64 "
                                         "--comm nccl --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out)["results"];
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) {
    EXPECT_EQ(row["batch"].get<int>() * row["gpus"].get<int>(), 64) << row.dump();
    EXPECT_EQ(row["accumulate"], 1);
    EXPECT_NEAR(row["throughput"].get<double>(), 64 / row["iteration_s"].get<double>(), 1e-6);
  }
  EXPECT_DOUBLE_EQ(rows[0]["speedup"].get<double>(), 1.0);
}

// K micro-batches per exchange: the K - 1 before the exchanging one are its iteration less its
// WU (and with no forward overlapping an exchange); FP+BP, WU, input and rest still make the
// iteration.
TEST(CliRun, AccumulationAddsMicroStepsThatSkipTheExchange) {
  const std::string base = kGpuscale + " run --workload resnet-50 --framework pytorch-ddp "
                                       "--gpus 2 --batch 16 --comm nccl --format json";
  const auto once = run_command(base);
  const auto four = run_command(base + " --accumulate 4");
  ASSERT_EQ(once.status, 0) << once.err;
  ASSERT_EQ(four.status, 0) << four.err;
  const auto a = nlohmann::json::parse(once.out)["results"][0];
  const auto b = nlohmann::json::parse(four.out)["results"][0];
  EXPECT_EQ(b["accumulate"], 4);
  const double micro = a["iteration_s"].get<double>() - a["wu_s"].get<double>() +
                       a["overlap_s"].get<double>();
  EXPECT_NEAR(b["iteration_s"].get<double>(), a["iteration_s"].get<double>() + 3 * micro, 1e-12);
  EXPECT_NEAR(b["fpbp_s"].get<double>(), 4 * a["fpbp_s"].get<double>(), 1e-12);
  EXPECT_DOUBLE_EQ(b["wu_s"].get<double>(), a["wu_s"].get<double>());
  EXPECT_NEAR(b["fpbp_s"].get<double>() + b["wu_s"].get<double>() + b["input_wait_s"].get<double>() +
                  b["rest_s"].get<double>(),
              b["iteration_s"].get<double>(), 1e-12);
  EXPECT_NEAR(b["throughput"].get<double>(), 2 * 16 * 4 / b["iteration_s"].get<double>(), 1e-6);
  const auto table = run_command(base.substr(0, base.find(" --format")) + " --accumulate 4");
  EXPECT_THAT(table.out, ::testing::HasSubstr(" accum "));
  EXPECT_THAT(table.out, ::testing::HasSubstr("accum = micro-batches per exchange"));
}

// A share that does not fit the GPUs runs in the fewest micro-batches that fit.
TEST(CliRun, AGlobalBatchTooLargeForOneGpuIsAccumulated) {
  const auto r = run_command(kGpuscale + " run --workload resnet-50 --framework pytorch-ddp "
                                         "--gpus 1,8 --global-batch 1024 --comm nccl --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out)["results"];
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_TRUE(row["fits_memory"].get<bool>()) << row.dump();
    EXPECT_EQ(row["batch"].get<int>() * row["accumulate"].get<int>() * row["gpus"].get<int>(), 1024);
  }
  EXPECT_GT(rows[0]["accumulate"].get<int>(), 1);  // 1024 images do not fit one 16 GB V100
  // Fixed micro-batches are kept even where they do not fit (the fits column says so).
  const auto fixed = run_command(kGpuscale + " run --workload resnet-50 --framework pytorch-ddp "
                                             "--gpus 1 --global-batch 1024 --accumulate 1 "
                                             "--comm nccl --format json");
  EXPECT_FALSE(nlohmann::json::parse(fixed.out)["results"][0]["fits_memory"].get<bool>());
}

TEST(CliRun, AGlobalBatchThatDoesNotSplitIsRefused) {
  auto r = run_command(kGpuscale + " run --workload lenet --gpus 1,3 --global-batch 64");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "--global-batch: a global batch of 64 does not split into 3 equal shares of 1 "
                   "micro-batches (3 GPUs): give a global batch every GPU count divides\n");
  r = run_command(kGpuscale + " run --workload lenet --gpus 2 --global-batch 64 --scaling weak");
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, ::testing::HasSubstr("a global batch is strong scaling"));
  r = run_command(kGpuscale + " run --workload lenet --global-batch 64 --batch 16");
  EXPECT_NE(r.status, 0);
  const std::string file = testing::write_temp_file("global-and-batch.yaml",
                                                    "workload: lenet\nbatch: 16\nglobal_batch: 64\n");
  r = run_command(kGpuscale + " run " + file);
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, ::testing::StartsWith(file + ":3: 'global_batch' and 'batch' exclude"));
}

// `--set workload.KEY=VALUE` reaches every workload of the run: a smaller input is less work and
// less memory; a workload's key written without the prefix is refused with the fix.
TEST(CliRun, SetOnWorkloadsChangesEveryWorkloadAndAWorkloadKeyNeedsItsPrefix) {
  const std::string base = kGpuscale + " run --workload lenet,alexnet-mxnet --gpus 1 --batch 16 "
                                       "--comm p2p --without input --format json";
  const auto full = run_command(base);
  const auto small = run_command(base + " --set workload.input.height=112 "
                                        "--set workload.input.width=112");
  ASSERT_EQ(full.status, 0) << full.err;
  ASSERT_EQ(small.status, 0) << small.err;
  const auto a = nlohmann::json::parse(full.out)["results"];
  const auto b = nlohmann::json::parse(small.out)["results"];
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_LT(b[i]["fpbp_s"].get<double>(), a[i]["fpbp_s"].get<double>()) << a[i]["workload"];
    EXPECT_LT(b[i]["memory_gpu0_gb"].get<double>(), a[i]["memory_gpu0_gb"].get<double>());
  }

  const auto refused = run_command(kGpuscale + " run --workload lenet --gpus 1 --set input.height=96");
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(refused.err, "--set: 'input' is a key of a workload, not of the machine: write "
                         "workload.input.height=96 to set it on every workload\n");
  const std::string file = testing::write_temp_file(
      "bad-workload-set.yaml", "workload: lenet\ngpus: 1\nset:\n  - workload.input.heigth=96\n");
  const auto at_line = run_command(kGpuscale + " run " + file);
  EXPECT_EQ(at_line.status, 2);
  EXPECT_THAT(at_line.err, ::testing::StartsWith(file + ":4: ")) << at_line.err;  // the entry
  EXPECT_THAT(at_line.err, ::testing::HasSubstr("heigth")) << at_line.err;
}

TEST(CliRun, TraceHasATrackPerGpuAndPerLinkAndKernelsThatDoNotOverlapInALane) {
  const std::string trace = std::string(GPUSCALE_TEST_TMPDIR) + "/run-trace.json";
  std::remove(trace.c_str());
  const auto r = run_command(kGpuscale + " run --workload lenet --gpus 2 --batch 16 --comm p2p "
                             "--trace " + trace);
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(trace);
  const auto j = nlohmann::json::parse(in);
  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;
  for (const auto& e : j["traceEvents"]) {
    const std::pair<int, int> thread{e["pid"].get<int>(), e.value("tid", -1)};
    if (e["ph"] == "M" && e["name"] == "thread_name") thread_names[thread] = e["args"]["name"];
    if (e["ph"] == "X") spans[thread].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
  }
  std::set<std::string> names;
  for (const auto& [thread, name] : thread_names) names.insert(name);
  EXPECT_TRUE(names.contains("gpu0 kernels")) << r.err;
  EXPECT_TRUE(names.contains("gpu1 kernels"));
  EXPECT_TRUE(names.contains("nvlink gpu1>gpu0") || names.contains("nvlink gpu0>gpu1"));
  for (auto& [thread, list] : spans) {
    std::sort(list.begin(), list.end());
    for (size_t i = 1; i < list.size(); ++i) {
      EXPECT_LE(list[i - 1].first + list[i - 1].second, list[i].first + 1e-6) << thread_names[thread];
    }
  }
}

// Some viewers drop pid 0 or events without a category; the args say what a span did.
TEST(CliRun, TraceEventsHaveAPidFromOneACategoryAndArgs) {
  const std::string trace = std::string(GPUSCALE_TEST_TMPDIR) + "/run-trace-args.json";
  std::remove(trace.c_str());
  const auto r = run_command(kGpuscale + " run --workload resnet-50 --gpus 1,2 --batch 16 "
                             "--comm p2p --framework mxnet --trace " + trace);
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(trace);
  const auto j = nlohmann::json::parse(in);
  std::set<int> pids;
  std::set<std::string> categories, algorithms;
  bool layer_seen = false, bytes_seen = false;
  for (const auto& e : j["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    ASSERT_TRUE(e.contains("cat")) << e.dump();
    categories.insert(e["cat"].get<std::string>());
    if (e["ph"] != "X") continue;
    const auto& args = e["args"];
    if (e["cat"] == "forward" || e["cat"] == "backward") {
      EXPECT_TRUE(args.contains("layer")) << e.dump();
      layer_seen = true;
      if (args.contains("algorithm")) algorithms.insert(args["algorithm"].get<std::string>());
    }
    if (e["cat"] == "transfer" || e["cat"] == "link") {
      EXPECT_EQ(args["algorithm"], "copy") << e.dump();  // the kvstore's own copies
      EXPECT_GT(args["bytes"].get<double>(), 0) << e.dump();
      bytes_seen = true;
    }
  }
  EXPECT_EQ(pids, (std::set<int>{1, 2}));  // one process per configuration, from 1
  for (const char* c : {"__metadata", "forward", "backward", "update", "transfer", "link"}) {
    EXPECT_TRUE(categories.contains(c)) << c;
  }
  EXPECT_TRUE(layer_seen);
  EXPECT_TRUE(bytes_seen);
  EXPECT_FALSE(algorithms.empty());  // ResNet-50's convolutions name their cuDNN algorithm
}

// A trace's complete events ("X") by track, lanes ("... #2") folded into their track.
std::map<std::string, std::vector<nlohmann::json>> trace_tracks(const std::string& path) {
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  std::map<std::pair<int, int>, std::string> thread_names;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      const std::string name = e["args"]["name"];
      thread_names[{e["pid"].get<int>(), e["tid"].get<int>()}] = name.substr(0, name.find(" #"));
    }
  }
  std::map<std::string, std::vector<nlohmann::json>> tracks;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    tracks[thread_names.at({e["pid"].get<int>(), e["tid"].get<int>()})].push_back(e);
  }
  return tracks;
}

TEST(CliRun, TraceShowsEachGpusCopiesAndATwoHopCopysSecondLegAfterItsFirst) {
  const std::string trace = std::string(GPUSCALE_TEST_TMPDIR) + "/run-trace-p2p8.json";
  std::remove(trace.c_str());
  // MXNet stages its own copies between GPUs without NVLink through the host; --routing
  // two_hop_gpu relays them through a GPU instead, both legs on NVLink.
  const auto r = run_command(kGpuscale + " run --topology dgx1-v100 --workload lenet --gpus 8 "
                             "--batch 16 --comm p2p --routing two_hop_gpu --trace " + trace);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto tracks = trace_tracks(trace);
  ASSERT_TRUE(tracks.contains("gpu5 copies"));
  EXPECT_TRUE(tracks.contains("gpu5 kernels"));
  // Legs of the same copy (same name but for "leg k/2") in time order: the i-th second leg
  // starts once the i-th first leg has ended, on another link.
  std::map<std::string, std::vector<std::pair<double, double>>> first_legs, second_legs;
  std::map<std::string, std::set<std::string>> first_links, second_links;
  for (const auto& [track, events] : tracks) {
    if (!track.starts_with("nvlink ")) continue;
    for (const auto& e : events) {
      const std::string name = e["name"];
      const double start = e["ts"].get<double>(), end = start + e["dur"].get<double>();
      for (auto [suffix, legs, links] : {std::tuple{" leg 1/2", &first_legs, &first_links},
                                         std::tuple{" leg 2/2", &second_legs, &second_links}}) {
        if (!name.ends_with(suffix)) continue;
        const std::string copy = name.substr(0, name.size() - std::string(suffix).size());
        (*legs)[copy].push_back({start, end});
        (*links)[copy].insert(track);
      }
    }
  }
  ASSERT_FALSE(second_legs.empty());
  for (auto& [copy, seconds] : second_legs) {
    auto& firsts = first_legs[copy];
    ASSERT_EQ(firsts.size(), seconds.size()) << copy;
    std::sort(firsts.begin(), firsts.end());
    std::sort(seconds.begin(), seconds.end());
    for (size_t i = 0; i < seconds.size(); ++i) {
      EXPECT_GE(seconds[i].first, firsts[i].second - 1e-3) << copy;  // trace times in us
    }
    for (const std::string& link : second_links[copy]) {
      EXPECT_FALSE(first_links[copy].contains(link)) << copy;
    }
  }
  // The copy from gpu0 to gpu5 on gpu0's copies track spans both of its legs.
  bool found = false;
  for (const auto& e : tracks.at("gpu0 copies")) {
    const std::string name = e["name"];
    found = found || name.find(" to gpu5 via gpu") != std::string::npos;
  }
  EXPECT_TRUE(found);
}

// MXNet's CommDevice copies every GPU's gradient into the reducer's buffers, the reducer's own
// too, and the new weights into the reducer's own executor array: on 2 GPUs gpu0, which reduces
// LeNet's fc1, copies fc1.weight locally twice per iteration. One GPU has no kvstore
// (python/mxnet/model.py:78-80 at 1.1.0): it updates in place and copies nothing.
TEST(CliRun, TheReducerCopiesItsOwnGradientAsWellAsTheWeights) {
  const auto local_copies = [](int gpus) {
    const std::string trace =
        std::string(GPUSCALE_TEST_TMPDIR) + "/run-trace-local-" + std::to_string(gpus) + ".json";
    std::remove(trace.c_str());
    const auto r = run_command(kGpuscale + " run --workload lenet --batch 16 --comm p2p "
                               "--without input --iterations 3 --gpus " + std::to_string(gpus) +
                               " --trace " + trace);
    EXPECT_EQ(r.status, 0) << r.err;
    const auto tracks = trace_tracks(trace);
    int n = 0;
    for (const auto& e : tracks.at("gpu0 kernels")) n += e["name"] == "copy fc1.weight";
    return n;
  };
  EXPECT_EQ(local_copies(1), 0);
  EXPECT_EQ(local_copies(2), 2 * 3);
}

// The timeline as CSV: each layer's kernels with their algorithm, each copy with its bytes, in
// time order, and the kernel time of rank 0's forward and backward is the run's FP+BP.
TEST(CliRun, EventsCsvListsEachLayersKernelsAndEachTransferInTimeOrder) {
  const std::string events = std::string(GPUSCALE_TEST_TMPDIR) + "/run-events.csv";
  std::remove(events.c_str());
  const auto r = run_command(kGpuscale + " run --workload resnet-50 --gpus 2 --batch 16 "
                             "--comm p2p --iterations 2 --format json --events " + events);
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(events);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "workload,comm,gpus,batch,track,category,name,layer,algorithm,bytes,start_s,end_s");
  int conv_with_algorithm = 0, transfers = 0;
  double previous_start = -1;
  std::set<std::string> layers;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 12u) << line;  // no field here holds a comma
    EXPECT_GE(std::stod(f[10]), previous_start) << line;
    previous_start = std::stod(f[10]);
    EXPECT_GE(std::stod(f[11]), std::stod(f[10])) << line;
    if (f[5] == "forward" && f[7].starts_with("conv") && !f[8].empty()) ++conv_with_algorithm;
    if (f[5] == "transfer") {
      EXPECT_GT(std::stod(f[9]), 0) << line;
      ++transfers;
    }
    if (f[5] == "forward") layers.insert(f[7]);
  }
  EXPECT_GT(conv_with_algorithm, 0);
  EXPECT_GT(transfers, 0);
  EXPECT_GT(layers.size(), 50u);  // ResNet-50's layers, each by name
}

TEST(CliRun, TraceToAMissingFolderFailsCleanly) {
  const auto r = run_command(kGpuscale + " run --workload lenet --gpus 1 --trace /nonexistent/t.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The timeline as a picture: a row per GPU's kernels and copies and per link direction used, and
// with a window, an axis that ends where the window does.
TEST(CliRun, TimelineSvgHasARowPerGpuAndLinkAndAWindowSetsItsAxis) {
  const std::string svg = std::string(GPUSCALE_TEST_TMPDIR) + "/run-timeline.svg";
  const std::string command = kGpuscale + " run --topology dgx1-v100 --workload lenet --gpus 2 "
                              "--batch 16 --comm nccl --timeline " + svg;
  std::remove(svg.c_str());
  const auto r = run_command(command);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string whole = file_text(svg);
  EXPECT_TRUE(whole.starts_with("<svg ")) << whole.substr(0, 100);
  EXPECT_TRUE(whole.ends_with("</svg>\n"));
  EXPECT_THAT(whole, ::testing::HasSubstr(">lenet nccl 2 GPUs batch 16</text>"));
  for (const char* track : {"gpu0 kernels", "gpu0 copies", "gpu1 kernels", "gpu1 copies"}) {
    EXPECT_THAT(whole, ::testing::HasSubstr(std::string(">") + track + "</text>")) << track;
  }
  EXPECT_THAT(whole, ::testing::ContainsRegex(">nvlink gpu[01]&gt;gpu[01]</text>"));

  ASSERT_EQ(run_command(command + " --timeline-window 2:7").status, 0);
  const std::string window = file_text(svg);
  EXPECT_NE(window, whole);
  EXPECT_THAT(window, ::testing::HasSubstr("text-anchor=\"middle\">2</text>"));
  EXPECT_THAT(window, ::testing::HasSubstr("text-anchor=\"middle\">7</text>"));
}

TEST(CliRun, ABadTimelineWindowIsOneLineAndWritesNothing) {
  const std::string svg = std::string(GPUSCALE_TEST_TMPDIR) + "/run-timeline-bad.svg";
  std::remove(svg.c_str());
  for (const std::string window : {"5", "5:2", "3:3", "-1:3", "a:4", "1:", "1:inf"}) {
    const auto r = run_command(kGpuscale + " run --workload lenet --gpus 2 --timeline " + svg +
                               " --timeline-window=" + window);
    EXPECT_EQ(r.status, 2) << window;
    EXPECT_TRUE(r.out.empty()) << window;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.err, ::testing::StartsWith("--timeline-window: '" + window +
                                             "' is not a window: write FROM:TO")) << r.err;
    EXPECT_FALSE(std::filesystem::exists(svg)) << window;
  }
  const auto r = run_command(kGpuscale + " run --workload lenet --gpus 2 --timeline-window 0:5");
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, ::testing::HasSubstr("--timeline-window requires --timeline")) << r.err;
}

}  // namespace
}  // namespace gpuscale

namespace gpuscale {
namespace {

using testing::run_command;

// The framework's exchange method and the collective algorithm set apart, and today's --comm
// names as their aliases: the same pair gives the same bytes whichever way it is named, and
// prints under its alias.
TEST(CliRunExchange, ExchangeAndAlgoGiveWhatTheirCommAliasGives) {
  const std::string run = std::string(GPUSCALE_EXECUTABLE) +
                          " run --workload lenet --gpus 1,2 --batch 16 --format csv ";
  const auto by_alias = run_command(run + "--comm p2p,nccl_tree");
  const auto by_pair = run_command(run + "--exchange kvstore_device,allreduce --algo nccl_tree");
  ASSERT_EQ(by_alias.status, 0) << by_alias.err;
  ASSERT_EQ(by_pair.status, 0) << by_pair.err;
  EXPECT_EQ(by_pair.out, by_alias.out);
  EXPECT_THAT(by_pair.out, ::testing::HasSubstr(",p2p,mxnet: kvstore=device per key,"));
  EXPECT_THAT(by_pair.out, ::testing::HasSubstr(",nccl_tree,mxnet: horovod fusion"));
  // --algo alone means the allreduce; `nccl` is NCCL's ring there as on --comm.
  EXPECT_EQ(run_command(run + "--algo nccl").out, run_command(run + "--comm nccl").out);
}

TEST(CliRunExchange, MisnamedOrMismatchedExchangesAreOneLineErrors) {
  const std::string run = std::string(GPUSCALE_EXECUTABLE) + " run --workload lenet --gpus 2 ";
  const auto both = run_command(run + "--comm nccl --exchange allreduce");
  EXPECT_EQ(both.status, 2);
  EXPECT_THAT(both.err, ::testing::HasSubstr("--comm: names the exchange and its algorithm in one "
                                             "name"));
  const auto lacking = run_command(run + "--framework pytorch-ddp --exchange kvstore_device");
  EXPECT_EQ(lacking.status, 2);
  EXPECT_THAT(lacking.err, ::testing::HasSubstr("framework 'pytorch-ddp' has no exchange method "
                                                "'kvstore_device' (it has: allreduce;"));
  const auto own = run_command(run + "--exchange kvstore_nccl --algo nccl_tree");
  EXPECT_EQ(own.status, 2);
  EXPECT_THAT(own.err, ::testing::HasSubstr("the others run their own"));
  const auto typo = run_command(run + "--exchange kvstore_devce");
  EXPECT_EQ(typo.status, 2);
  EXPECT_THAT(typo.err, ::testing::HasSubstr("did you mean 'kvstore_device'?"));
  for (const auto* r : {&both, &lacking, &own, &typo}) {
    EXPECT_TRUE(r->out.empty());
    EXPECT_EQ(std::count(r->err.begin(), r->err.end(), '\n'), 1) << r->err;
  }
}

}  // namespace
}  // namespace gpuscale
