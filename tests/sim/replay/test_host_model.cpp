// The host as part of the simulated machine (sim/replay/replay.hpp, workloads/src/framework.hpp):
// host threads serialise what the framework serialises, against closed forms; each mechanism
// switches off; a framework file is read strictly. Simulations run in child processes
// (run_isolated): SimGrid allows one engine per process.
#include <gtest/gtest.h>

#include <simgrid/s4u.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "sim/engine/isolated.hpp"
#include "sim/engine/simgrid_platform.hpp"
#include "sim/exchange/exchange_choice.hpp"
#include "sim/experiment/experiment.hpp"
#include "sim/replay/host_threads.hpp"
#include "sim/replay/replay.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/iteration_graph.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::sim {
namespace {

// Three 1 ms operations ready at once on a pool of `threads`: when each ends.
std::string pool_ends(int threads) {
  return run_isolated([threads] {
    const auto engine = make_engine();
    simgrid::s4u::create_full_zone("empty")->seal();
    DagExecutor dag;
    HostThreadPool pool(dag, threads);
    const DagExecutor::NodeId start = dag.add({}, {});
    std::vector<DagExecutor::NodeId> ends;
    for (int i = 0; i < 3; ++i) {
      const DagExecutor::NodeId granted = pool.acquire(start);
      ends.push_back(dag.add({DagExecutor::Kind::Delay, nullptr, 1e-3, {}, 0, 0}, {granted}));
      pool.hold_until(ends.back());
    }
    dag.run();
    std::string out;
    for (auto id : ends) out += std::to_string(static_cast<int>(dag.end_time(id) * 1e3 + 0.5)) + " ";
    return out;
  });
}

TEST(HostThreads, AnOperationWaitsForAFreeThread) {
  EXPECT_EQ(pool_ends(1), "1 2 3 ");
  EXPECT_EQ(pool_ends(2), "1 1 2 ");
  EXPECT_EQ(pool_ends(0), "1 1 1 ");  // no pool: nobody waits
}

ResultRow run_one(const Experiment& e) {
  const auto rows = run_experiment(e);
  EXPECT_EQ(rows.size(), 1u);
  return rows.back();
}

Experiment lenet_on(int gpus) {
  Experiment e;
  e.workloads = {"lenet"};
  e.gpus = {gpus};
  e.batches = {16};
  e.comms = {"p2p"};
  return e;
}

TEST(HostModel, APythonBoundIterationTakesThePythonThreadsWork) {
  // 0.1 s per key dwarfs LeNet's GPU work: the iteration is the Python thread's program,
  // keys x python_per_key (+ its microseconds of per-GPU work and metric sync).
  Experiment e = lenet_on(1);
  e.framework = testing::framework_file_with("python_per_key",
                                             "{value: 100 ms, fitted: true, range: [0 s, 1 s]}");
  e.without = {"input"};
  const int keys = 8;  // lenet: conv1, conv2, fc1, fc2, weights and biases
  EXPECT_NEAR(run_one(e).iteration_s / (keys * 0.1), 1.0, 1e-3);
  e.without = {"input", "host"};
  EXPECT_LT(run_one(e).iteration_s, 0.05);
}

TEST(HostModel, EachMechanismOnlyAddsTime) {
  for (int gpus : {1, 4}) {
    Experiment all = lenet_on(gpus);
    const double with_all = run_one(all).iteration_s;
    for (const std::string& mechanism : mechanism_names()) {
      Experiment e = all;
      e.without = {mechanism};
      EXPECT_LE(run_one(e).iteration_s, with_all * (1 + 1e-9)) << mechanism << " " << gpus;
    }
  }
}

TEST(HostModel, ADecodeBoundIterationTakesTheDecodeThreadsTime) {
  // 10 ms per image on the DGX-1's 2.2 GHz cores, 4 decode threads, 2 GPUs x 16 images: every
  // batch takes 32 x 10 ms / 4 = 80 ms to decode, far more than LeNet's GPU work.
  const std::string folder = std::filesystem::path(testing::write_temp_file(
      "imagenet.yaml",
      "name: imagenet\nsamples: 1281167\ndecode: {per_sample: 10 ms, clock: 2.2 GHz}\n")).parent_path();
  const testing::ScopedEnv datasets_dir("GPUSCALE_DATASETS_DIR");
  ::setenv("GPUSCALE_DATASETS_DIR", folder.c_str(), 1);
  Experiment e = lenet_on(2);
  const ResultRow decode_bound = run_one(e);
  e.without = {"input"};
  const ResultRow without_input = run_one(e);
  EXPECT_NEAR(decode_bound.iteration_s / 0.080, 1.0, 1e-3);
  EXPECT_LT(without_input.iteration_s, 0.05);
  // The GPUs wait for each batch what their own work leaves of the 80 ms; that wait is the
  // pipeline's, not the exchange's, so the stages add up to the iteration.
  EXPECT_GT(decode_bound.input_wait_s, 0.080 - without_input.iteration_s - 0.005);
  EXPECT_LE(decode_bound.fpbp_s + decode_bound.wu_s + decode_bound.input_wait_s, decode_bound.iteration_s + 1e-9);
  EXPECT_EQ(without_input.input_wait_s, 0.0);
}

TEST(HostModel, ADaliDecodeBoundIterationTakesOneGpusBatchOnItsOwnThreads) {
  // Decoding on the GPU, 10 ms of Huffman per image: MXNet's one process runs a DALI pipeline of
  // 2 threads per GPU, so 2 GPUs x 16 images take 32 x 10 ms / 4 = 80 ms, the same as one GPU's
  // 16 images on its 2 threads.
  const std::string folder = std::filesystem::path(testing::write_temp_file(
      "imagenet.yaml",
      "name: imagenet\nsamples: 1281167\ndecode: {per_sample: 40 ms, clock: 2.2 GHz}\n"
      "gpu_decode: {host_per_sample: 10 ms, clock: 2.2 GHz, pixels: 188600, "
      "coefficients: 1146 KB}\n")).parent_path();
  const testing::ScopedEnv datasets_dir("GPUSCALE_DATASETS_DIR");
  ::setenv("GPUSCALE_DATASETS_DIR", folder.c_str(), 1);
  for (int gpus : {1, 2}) {
    Experiment e = lenet_on(gpus);
    e.input_pipeline = "dali";
    EXPECT_NEAR(run_one(e).iteration_s / 0.080, 1.0, 1e-3) << gpus << " GPUs";
  }
}

TEST(FrameworkFile, DaliTakesThePlaceOfTheFrameworksOwnPipelineWhereItHasOne) {
  Experiment e;
  e.framework = "mxnet";
  e.input_pipeline = "dali";
  const wl::FrameworkConfig dali = framework_of(e);
  EXPECT_TRUE(dali.input.on_gpu);
  EXPECT_EQ(dali.input.decode_threads, 2);
  EXPECT_EQ(dali.input.prefetch_batches, 2);
  EXPECT_EQ(dali.input.decoder_buffer.value, 16.0 * 1024 * 1024);
  e.decode_threads = 8;
  EXPECT_EQ(framework_of(e).input.decode_threads, 8);
  wl::FrameworkConfig without = wl::load_framework("mxnet");
  without.dali_input.reset();
  e.framework_config = std::make_shared<const wl::FrameworkConfig>(without);
  e.input_pipeline_written_at = Origin{"--input-pipeline", 0};
  EXPECT_NE(testing::config_error_of([&] { framework_of(e); })
                .find("--input-pipeline: framework mxnet"),
            std::string::npos);
}

// pytorch-ddp.yaml with `engine_op` (per operator dispatch) and `stream_sync` set, no launch cost.
std::string pytorch_with(const std::string& engine_op, const std::string& stream_sync) {
  const std::string once = testing::framework_file_with("engine_op", engine_op, "pytorch-ddp");
  std::ifstream in(once);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = std::regex_replace(text, std::regex("\n  stream_sync: [^\n]*"), "\n  stream_sync: " + stream_sync);
  text = std::regex_replace(text, std::regex("\n  kernel_launch: [^\n]*"), "\n  kernel_launch: 0 us");
  return testing::write_temp_file("pytorch-" + engine_op + "-" + stream_sync + ".yaml", text);
}

TEST(HostModel, AnEagerFrameworkDispatchBoundIterationIsItsOperatorsDispatch) {
  // 10 ms per operator dwarfs LeNet's kernels: the one dispatching thread per GPU is the
  // iteration, one dispatch per forward and backward kernel and per update.
  Experiment e = lenet_on(1);
  e.comms = {"nccl"};
  e.framework = pytorch_with("10 ms", "0 us");
  e.without = {"host", "input"};
  const wl::Workload w = wl::load_workload("lenet");
  const wl::IterationGraph graph = wl::build_iteration_graph(w, wl::compute_costs(w), 1);
  int operators = 0;
  for (const wl::Task& task : graph.tasks) operators += task.kind != wl::TaskKind::Exchange;
  EXPECT_NEAR(run_one(e).iteration_s / (operators * 0.010), 1.0, 1e-3);
}

TEST(HostModel, WithoutPerOperationSyncsASyncCostNeverShows) {
  // MXNet ends every engine operation with a stream sync; PyTorch's eager mode issues and moves
  // on, so a 1 ms sync costs it nothing (the one read-back is the host mechanism's, off here).
  Experiment e = lenet_on(1);
  e.comms = {"nccl"};
  e.without = {"host", "input"};
  e.framework = pytorch_with("0 us", "1 ms");
  const double with_costly_sync = run_one(e).iteration_s;
  e.framework = pytorch_with("0 us", "0 us");
  EXPECT_NEAR(with_costly_sync / run_one(e).iteration_s, 1.0, 1e-9);
  Experiment mxnet = lenet_on(1);
  mxnet.without = {"host", "input"};
  mxnet.framework = testing::framework_file_with("stream_sync", "1 ms");
  const double mxnet_costly = run_one(mxnet).iteration_s;
  mxnet.framework = testing::framework_file_with("stream_sync", "0 us");
  EXPECT_GT(mxnet_costly - run_one(mxnet).iteration_s, 5e-3);  // a sync per segment and per op
}

TEST(HostModel, PyTorchReadsTheLossBeforeItIssuesBackward) {
  // main.py's loss.item() blocks the Python thread between forward and backward: a 50 ms read
  // adds all of itself to the iteration. MXNet's Module.fit reads the metric after update(),
  // while the GPU runs backward, which hides most of it.
  auto added_by_a_slow_read = [](const std::string& framework) {
    Experiment e;
    e.workloads = {"resnet-50"};
    e.gpus = {1};
    e.batches = {16};
    e.comms = {"nccl"};
    e.without = {"input"};
    e.framework = testing::framework_file_with("metric_sync", "50 ms", framework);
    const double slow = run_one(e).iteration_s;
    e.framework = testing::framework_file_with("metric_sync", "0 us", framework);
    return slow - run_one(e).iteration_s;
  };
  EXPECT_NEAR(added_by_a_slow_read("pytorch-ddp"), 0.050, 0.001);
  EXPECT_LT(added_by_a_slow_read("mxnet"), 0.040);
}

TEST(HostModel, SameInputSameOutput) {
  const Experiment e = lenet_on(4);
  EXPECT_EQ(run_one(e).iteration_s, run_one(e).iteration_s);
}

TEST(FrameworkFile, AFittedValueOutsideItsRangeIsAnErrorNamingTheLine) {
  const std::string path = testing::framework_file_with(
      "engine_op", "{value: 90 us, fitted: true, range: [5.8 us, 50 us]}");
  const std::string message = testing::config_error_of([&] { wl::load_framework(path); });
  EXPECT_NE(message.find(path + ":"), std::string::npos) << message;
  EXPECT_NE(message.find("outside its range"), std::string::npos) << message;
}

TEST(FrameworkFile, UnknownKeysAndBadValuesAreErrors) {
  EXPECT_NE(testing::config_error_of([] {
              wl::load_framework(testing::framework_file_with("stream_sync", "-3 us"));
            }).find("stream_sync"),
            std::string::npos);
  const std::string typo =
      testing::framework_file_with("kernel_launch", "4.83 us\n  kernel_lunch: 1 us");
  EXPECT_NE(testing::config_error_of([&] { wl::load_framework(typo); }).find("kernel_lunch"),
            std::string::npos);
}

TEST(FrameworkFile, MxnetRunsItsKvstoresInOneProcessAndAllreducesPerGpu) {
  const wl::FrameworkConfig f = wl::load_framework("mxnet");
  auto method = [&](const char* name) {
    return make_exchange(resolve_exchange(name, f), f, f.allreduce);
  };
  EXPECT_EQ(resolve_exchange("p2p", f).exchange, "kvstore_device");
  EXPECT_EQ(resolve_exchange("nccl_reduce_bcast", f).exchange, "kvstore_nccl");
  EXPECT_EQ(resolve_exchange("nccl", f).exchange, "allreduce");
  EXPECT_FALSE(method("p2p")->process_per_gpu());
  EXPECT_FALSE(method("nccl_reduce_bcast")->process_per_gpu());
  EXPECT_TRUE(method("nccl")->process_per_gpu());
  for (const wl::HostCost* c : f.host.all()) {
    if (c->fitted) {
      EXPECT_GE(c->value.value, c->low.value) << c->name;
      EXPECT_LE(c->value.value, c->high.value) << c->name;
    }
  }
}

}  // namespace
}  // namespace gpuscale::sim
