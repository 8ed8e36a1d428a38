// `gpuscale run --export-chakra`: the run's own iteration as a Chakra trace. The graph holds a
// kernel per layer and pass, an update per tensor and the framework's allreduces, whose bytes
// are the model's gradient bytes, each after the backward kernels that ready its gradients; two
// exports are the same bytes; the exported trace replays (`replay-trace --chakra`) to the
// iteration its own kernels and collectives imply; an unwritable prefix is one line, exit 2,
// and no file.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "sim/trace/iteration_trace.hpp"
#include "sim/trace/trace_job.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/interop/chakra_trace.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::sim {
namespace {

namespace fs = std::filesystem;
using interop::TraceGraph;
using interop::TraceNode;
using nlohmann::json;
using testing::file_bytes;
using testing::run_command;
using testing::temp_prefix;

const std::string kGpuscale = GPUSCALE_EXECUTABLE;

Experiment on_dgx1(const std::string& framework) {
  Experiment e;
  e.topology = "dgx1-v100";
  e.framework = framework;
  return e;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

int count_named(const TraceGraph& g, const std::string& prefix) {
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(), [&](const TraceNode& n) {
    return starts_with(n.name, prefix);
  }));
}

// Every node that node `i` waits for, directly or not.
std::set<int> ancestors(const TraceGraph& g, int i) {
  std::set<int> seen;
  std::vector<int> todo = g.nodes[static_cast<size_t>(i)].deps;
  while (!todo.empty()) {
    const int d = todo.back();
    todo.pop_back();
    if (seen.insert(d).second) {
      for (int e : g.nodes[static_cast<size_t>(d)].deps) todo.push_back(e);
    }
  }
  return seen;
}

struct Model {
  wl::Workload workload;
  wl::WorkloadCosts costs;
  double gradient_bytes = 0;  // fp32
};
Model model(const std::string& name) {
  Model m{wl::load_workload(name), {}, 0};
  m.costs = wl::compute_costs(m.workload);
  for (const wl::ParamTensor& t : m.costs.tensors) m.gradient_bytes += 4.0 * t.elements;
  return m;
}

// ResNet-50 with DDP's 25 MiB buckets on 4 V100s: the kernels of every layer and pass, one update
// per tensor, the buckets' allreduces carrying every gradient byte once, each after the backward
// kernels of all the gradients it and the buckets before it hold; the updates after all of them.
TEST(IterationTrace, HoldsTheRunsKernelsBucketsAndUpdates) {
  const Model m = model("resnet-50");
  const TraceGraph g = iteration_trace(on_dgx1("pytorch-ddp"), {"resnet-50", "nccl", 16, 4});
  int backward_weights = 0, backward_data = 0;
  for (size_t l = 1; l < m.workload.layers.size(); ++l) {
    backward_weights += m.costs.layers[l].has_backward_weights;
    backward_data += m.costs.layers[l].has_backward_data;
  }
  const auto layers = static_cast<int>(m.workload.layers.size());
  EXPECT_EQ(count_named(g, "fwd "), layers - 1);
  EXPECT_EQ(count_named(g, "bwd-weights "), backward_weights);
  EXPECT_EQ(count_named(g, "bwd-data "), backward_data);
  EXPECT_EQ(count_named(g, "update "), static_cast<int>(m.costs.tensors.size()));

  std::map<std::string, double> bytes_of_layer;  // gradient bytes readied by a layer's backward
  for (const wl::ParamTensor& t : m.costs.tensors) {
    bytes_of_layer[m.workload.layers[static_cast<size_t>(t.layer)].name] += 4.0 * t.elements;
  }
  double allreduced = 0;
  int collectives = 0;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    const TraceNode& n = g.nodes[static_cast<size_t>(i)];
    if (n.kind == TraceNode::Kind::Compute) {
      EXPECT_GE(n.seconds, 0) << n.name;
      EXPECT_TRUE(starts_with(n.name, "fwd ") || starts_with(n.name, "bwd-") ||
                  starts_with(n.name, "update ") || starts_with(n.name, "copy "))
          << n.name;
    }
    if (n.kind != TraceNode::Kind::Collective) continue;
    ++collectives;
    EXPECT_EQ(n.collective, wl::Collective::AllReduce);
    allreduced += n.bytes;
    double ready = 0;
    for (int a : ancestors(g, i)) {
      const std::string& name = g.nodes[static_cast<size_t>(a)].name;
      if (starts_with(name, "bwd-weights ")) ready += bytes_of_layer[name.substr(12)];
    }
    EXPECT_GE(ready, allreduced * (1 - 1e-12)) << n.name;
  }
  EXPECT_EQ(allreduced, m.gradient_bytes);
  EXPECT_GT(collectives, 2);  // ~100 MB in 25 MiB buckets
  EXPECT_EQ(count_named(g, "copy into bucket"), collectives);
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    if (!starts_with(g.nodes[static_cast<size_t>(i)].name, "update ")) continue;
    const std::set<int> before = ancestors(g, i);
    const auto exchanged = std::count_if(before.begin(), before.end(), [&](int a) {
      return g.nodes[static_cast<size_t>(a)].kind == TraceNode::Kind::Collective;
    });
    EXPECT_EQ(exchanged, collectives) << "DDP steps once every bucket is exchanged";
  }
}

// MXNet's kvstore=nccl: per key a reduce, the update, a broadcast; one GPU: no collective.
TEST(IterationTrace, KvstoreNcclReducesUpdatesAndBroadcastsEachKey) {
  const Model m = model("lenet");
  const TraceGraph g = iteration_trace(on_dgx1("mxnet"), {"lenet", "nccl_reduce_bcast", 16, 2});
  const auto keys = static_cast<int>(m.costs.tensors.size());
  EXPECT_EQ(count_named(g, "reduce "), keys);
  EXPECT_EQ(count_named(g, "broadcast "), keys);
  EXPECT_EQ(count_named(g, "update "), keys);
  double reduced = 0;
  for (const TraceNode& n : g.nodes) {
    if (n.kind == TraceNode::Kind::Collective && n.collective == wl::Collective::Reduce) {
      reduced += n.bytes;
    }
  }
  EXPECT_EQ(reduced, m.gradient_bytes);
  const TraceGraph one = iteration_trace(on_dgx1("mxnet"), {"lenet", "nccl", 16, 1});
  EXPECT_EQ(count_named(one, "allreduce "), 0);
  EXPECT_EQ(count_named(one, "update "), keys);
}

TEST(IterationTrace, SpatialRunsAreRefused) {
  Experiment e;
  e.topology = "lassen";
  e.framework = "pytorch-horovod";
  e.spatial = 4;
  EXPECT_EQ(testing::config_error_of(
                [&] { iteration_trace(e, {"mesh-tangling", "nccl", 1, 4}); }),
            "--export-chakra: a run that splits each sample (--spatial) is not exported: its "
            "halo exchange is not written as Chakra messages; drop --spatial");
}

// Written and read back: the same kinds, durations and bytes; two exports are the same bytes.
TEST(IterationTrace, ExportReadsBackAndIsDeterministic) {
  const Model m = model("resnet-50");
  const Configuration c{"resnet-50", "nccl", 32, 8};
  const TraceGraph g = iteration_trace(on_dgx1("mxnet"), c);
  const std::string a = temp_prefix("resnet-a"), b = temp_prefix("resnet-b");
  interop::write_chakra_trace(g, a, 8);
  interop::write_chakra_trace(iteration_trace(on_dgx1("mxnet"), c), b, 8);
  for (int rank = 0; rank < 8; ++rank) {
    const std::string file = fmt::format(".{}.et", rank);
    EXPECT_EQ(file_bytes(a + file), file_bytes(b + file)) << rank;
  }
  const TraceGraph back = interop::read_chakra_trace(a);
  ASSERT_EQ(back.nodes.size(), g.nodes.size());
  double allreduced = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(back.nodes[i].kind, g.nodes[i].kind) << i;
    EXPECT_EQ(back.nodes[i].seconds, g.nodes[i].seconds) << i;
    EXPECT_EQ(back.nodes[i].bytes, g.nodes[i].bytes) << i;
    if (back.nodes[i].kind == TraceNode::Kind::Collective) allreduced += back.nodes[i].bytes;
  }
  EXPECT_EQ(allreduced, m.gradient_bytes);
}

// What the graph's own times imply for its iteration: its longest path, each kernel taking its
// duration and each collective the time it takes alone on the machine (a one-node trace
// replayed the same way; the collectives run one after another, so none shares links with
// another). The replay shares the GPU between kernels that may run at once (a buffer's copies
// and the updates beside the backward and one another), so the iteration is at least the
// longest path and at least all kernels back to back, and at most the longest path plus the
// kernels off the stream's chain: that window is the tolerance.
struct Implied {
  double longest_path_s = 0;
  double concurrent_kernels_s = 0;  // copies and updates: kernels off the stream's chain
  double kernels_s = 0;             // every kernel: one GPU runs them all
};
Implied implied_by(const TraceGraph& g, const TraceJob& job) {
  std::map<double, double> alone;  // collective bytes -> its time alone
  std::vector<double> end(g.nodes.size(), 0);
  Implied out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const TraceNode& n = g.nodes[i];
    double start = 0;
    for (int d : n.deps) start = std::max(start, end[static_cast<size_t>(d)]);
    double seconds = n.seconds;
    if (n.kind == TraceNode::Kind::Compute) out.kernels_s += n.seconds;
    if (n.kind == TraceNode::Kind::Collective) {
      if (!alone.contains(n.bytes)) {
        TraceGraph one;
        one.source = "one collective";
        one.nodes.push_back({TraceNode::Kind::Collective, "c", 0, n.collective, n.bytes, 0, {}});
        alone[n.bytes] = run_trace_job(one, job).replay.iteration_s;
      }
      seconds = alone[n.bytes];
    } else if (!starts_with(n.name, "fwd ") && !starts_with(n.name, "bwd-")) {
      out.concurrent_kernels_s += n.seconds;
    }
    end[i] = start + seconds;
    out.longest_path_s = std::max(out.longest_path_s, end[i]);
  }
  return out;
}

// ResNet-50 on 8 V100s of a DGX-1, MXNet's Horovod-style fusion: `run --export-chakra`, then
// `replay-trace --chakra` of what it wrote on the same machine and method.
TEST(CliRunExportChakra, ExportReplaysToTheIterationItsTimesImply) {
  const std::string prefix = temp_prefix("cli-run");
  const auto run = run_command(kGpuscale + " run --topology dgx1-v100 --workload resnet-50 "
                               "--gpus 8 --batch 32 --comm nccl --format json --export-chakra " +
                               prefix);
  ASSERT_EQ(run.status, 0) << run.err;
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_TRUE(fs::exists(fmt::format("{}.{}.et", prefix, rank))) << rank;
  }
  EXPECT_FALSE(fs::exists(prefix + ".8.et"));
  const auto replay = run_command(kGpuscale + " replay-trace --chakra " + prefix +
                                  " --topology dgx1-v100 --gpus 8 --comm nccl --format json");
  ASSERT_EQ(replay.status, 0) << replay.err;
  const json r = json::parse(replay.out);
  TraceJob job;
  job.topology = "dgx1-v100";
  job.gpus = 8;
  job.comm = "nccl";
  const Implied implied = implied_by(interop::read_chakra_trace(prefix), job);
  const double iteration = r["iteration_s"];
  // 92.51 ms <= 93.02 ms <= 93.24 ms when written: a window 0.8 % wide.
  EXPECT_GE(iteration, std::max(implied.longest_path_s, implied.kernels_s) * (1 - 1e-9));
  EXPECT_LE(iteration, (implied.longest_path_s + implied.concurrent_kernels_s) * (1 + 1e-9));
  // The same GPU work as the run's FP+BP and WU, less the host's costs the trace leaves out.
  const json row = json::parse(run.out)["results"][0];
  EXPECT_LT(iteration, row["iteration_s"].get<double>());
  EXPECT_NEAR(iteration, row["fpbp_s"].get<double>() + row["wu_s"].get<double>(),
              0.05 * iteration);
}

TEST(CliRunExportChakra, TwoExportsAreTheSameBytes) {
  const std::string a = temp_prefix("cli-a"), b = temp_prefix("cli-b");
  for (const std::string& prefix : {a, b}) {
    const auto r = run_command(kGpuscale + " run --workload lenet --gpus 2 --comm nccl "
                               "--framework pytorch-ddp --export-chakra " + prefix);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("chakra trace: " + prefix + ".0.et .. " + prefix + ".1.et"),
              std::string::npos) << r.out;
  }
  EXPECT_EQ(file_bytes(a + ".0.et"), file_bytes(b + ".0.et"));
  EXPECT_EQ(file_bytes(a + ".1.et"), file_bytes(b + ".1.et"));
}

// No folder: one line before anything is simulated. A rank's file that cannot be written (a
// folder has its name): one line, and none of the ranks' files left behind, nor a partial one.
TEST(CliRunExportChakra, UnwritablePrefixIsOneLineAndNoFile) {
  const auto missing = run_command(kGpuscale + " run --workload lenet --gpus 2 --comm nccl "
                                   "--export-chakra /no/such/folder/t");
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err, "--export-chakra: folder '/no/such/folder' does not exist: create it or "
                         "write the file elsewhere\n");
  EXPECT_TRUE(missing.out.empty());

  const std::string prefix = temp_prefix("blocked");
  fs::create_directory(prefix + ".2.et");
  const auto blocked = run_command(kGpuscale + " run --workload lenet --gpus 4 --comm nccl "
                                   "--export-chakra " + prefix);
  EXPECT_EQ(blocked.status, 2);
  EXPECT_EQ(std::count(blocked.err.begin(), blocked.err.end(), '\n'), 1) << blocked.err;
  EXPECT_TRUE(starts_with(blocked.err, "--export-chakra: cannot write '" + prefix + ".2.et'"))
      << blocked.err;
  EXPECT_TRUE(blocked.out.empty());
  for (const auto& entry : fs::directory_iterator(fs::path(prefix).parent_path())) {
    const std::string name = entry.path().filename().string();
    if (!starts_with(name, fs::path(prefix).filename().string() + ".")) continue;
    EXPECT_TRUE(name == fs::path(prefix).filename().string() + ".2.et" ||
                name == fs::path(prefix).filename().string() + ".marker")
        << name << " left behind";
  }
}

TEST(CliRunExportChakra, SeveralConfigurationsAreRefused) {
  const auto r = run_command(kGpuscale + " run --workload lenet --gpus 2,4 --comm nccl "
                             "--export-chakra /tmp/never-written");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "--export-chakra: writes the iteration of one configuration, and this run has "
                   "2: give one --workload, --comm, --batch and --gpus\n");
}

}  // namespace
}  // namespace gpuscale::sim
