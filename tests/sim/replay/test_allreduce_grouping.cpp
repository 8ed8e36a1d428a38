// How a framework groups gradients into allreduces (wl::AllreduceModel): DDP buckets of one
// tensor each are the unfused exchange plus the copies into and out of each bucket, one bucket
// holding every gradient waits for the last one, and the framework file's `allreduce` section is
// read strictly. When the optimizer updates (wl::UpdateTiming):
// MXNet each weight once its gradient is exchanged, PyTorch every weight after the whole
// exchange, Horovod's thread waiting for it on the host, DDP's stream on the GPU; and where:
// MXNet's kvstores on the reducing GPU, or on every GPU without update_on_kvstore.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <iterator>
#include <regex>

#include "sim/experiment/experiment.hpp"
#include "sim/experiment/replay_inputs.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/layer_costs.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::sim {
namespace {

// mxnet.yaml with its `allreduce` section replaced.
std::string framework_with_allreduce(const std::string& name, const std::string& section) {
  std::ifstream file(wl::load_framework("mxnet").file);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  text = std::regex_replace(text, std::regex("\nallreduce:\n(  [^\n]*\n)+"), "\nallreduce:\n" + section);
  return testing::write_temp_file(name + ".yaml", text);
}

const std::string kBuckets = "  grouping: buckets\n  buffer: 25 MiB\n  first_bucket: 1 MiB\n";

double iteration_s(Experiment e) {
  e.workloads = {"resnet-50"};
  e.gpus = {8};
  e.batches = {16};
  e.comms = {"nccl"};
  const auto rows = run_experiment(e);
  EXPECT_EQ(rows.size(), 1u);
  return rows.back().iteration_s;
}

TEST(AllreduceGrouping, BucketsOfOneTensorAreTheUnfusedExchangeAndTheirCopies) {
  // A 1-byte limit closes every bucket at its first tensor: one allreduce per tensor, in ready
  // order on one stream, as `--fusion-mb 0` runs them, but DDP copies each gradient into its
  // bucket and back: more GPU time, at most every copy's time laid end to end.
  Experiment unfused;
  unfused.framework = "mxnet";  // Horovod's allreduce, one per tensor
  unfused.fusion_mb = 0;
  Experiment one_per_bucket;
  one_per_bucket.framework = framework_with_allreduce(
      "buckets-of-one", "  grouping: buckets\n  buffer: 1 B\n  first_bucket: 1 B\n");
  Configuration c;
  c.workload = "resnet-50";
  c.comm = "nccl";
  c.batch = 16;
  c.gpus = 8;
  const ReplayInputs in(one_per_bucket, c);
  double copies_s = 0;
  for (const wl::ParamTensor& t : in.costs.tensors) {
    copies_s += 2 * in.compute->reduction_time(2 * t.elements * 4.0).value;  // in and out, fp32
  }
  const double with_copies = iteration_s(one_per_bucket);
  const double without = iteration_s(unfused);
  EXPECT_GT(with_copies, without);
  EXPECT_LT(with_copies, without + copies_s);
}

TEST(AllreduceGrouping, OneBucketForEveryGradientWaitsForTheLastOne) {
  // DDP's 25 MB buckets start allreducing during backward; a single bucket only after it.
  Experiment ddp;
  ddp.framework = framework_with_allreduce("ddp-buckets", kBuckets);
  Experiment one_bucket;
  one_bucket.framework = framework_with_allreduce(
      "one-bucket", "  grouping: buckets\n  buffer: 10 GB\n  first_bucket: 10 GB\n");
  EXPECT_GT(iteration_s(one_bucket), iteration_s(ddp));
}

// One iteration of ResNet-50 on 2 GPUs with an allreduce: when rank 0's GPU ends its last
// backward kernel and its exchange (its last link transfer, or the last copy out of a fusion
// buffer or bucket), and starts its first and last update.
struct UpdateTimes {
  double last_backward_end = 0, last_exchange_end = 0;
  double first_update_start = 1e9, last_update_start = 0;
};

// The timeline of one iteration of `workload` at batch 16 on `gpus` GPUs.
std::vector<TimelineEvent> one_iteration(const std::string& framework, const std::string& workload,
                                         int gpus, const std::string& comm) {
  Experiment e;
  e.framework = framework;
  e.workloads = {workload};
  e.gpus = {gpus};
  e.batches = {16};
  e.comms = {comm};
  e.iterations = 1;
  e.record_timeline = true;
  return run_experiment(e).back().timeline.events;
}

UpdateTimes update_times(const std::string& framework, const std::string& comm) {
  UpdateTimes u;
  for (const TimelineEvent& event : one_iteration(framework, "resnet-50", 2, comm)) {
    if (event.category == "link") {
      u.last_exchange_end = std::max(u.last_exchange_end, event.end_s);
    }
    if (event.track != "gpu0 kernels") continue;
    if (event.category == "copy" || event.category == "reduction") {  // into and out of buffers
      u.last_exchange_end = std::max(u.last_exchange_end, event.end_s);
    }
    if (event.category == "backward") {
      u.last_backward_end = std::max(u.last_backward_end, event.end_s);
    }
    if (event.category == "update") {
      u.first_update_start = std::min(u.first_update_start, event.start_s);
      u.last_update_start = std::max(u.last_update_start, event.start_s);
    }
  }
  return u;
}

TEST(UpdateTiming, MxnetUpdatesEachWeightOnceItsGradientIsExchanged) {
  // Horovod's ring under MXNet (an allreduce method): the first keys are updated while the GPU
  // still runs backward.
  const UpdateTimes u = update_times("mxnet", "ring");
  EXPECT_LT(u.first_update_start, u.last_backward_end);
}

TEST(UpdateTiming, PytorchUpdatesEveryWeightAfterTheWholeExchange) {
  for (const char* framework : {"pytorch-ddp", "pytorch-horovod"}) {
    const UpdateTimes u = update_times(framework, "nccl");
    EXPECT_GE(u.first_update_start, u.last_backward_end) << framework;
    EXPECT_GE(u.first_update_start, u.last_exchange_end) << framework;
  }
}

TEST(UpdateTiming, HorovodsThreadWaitsForTheExchangeDdpsStreamDoes) {
  // DDP's updates are issued while the GPU still computes, so they follow the last allreduce at
  // once; Horovod's thread issues them only then, one dispatch and launch each: the last starts
  // at least every other update's dispatch later.
  const UpdateTimes ddp = update_times("pytorch-ddp", "nccl");
  const UpdateTimes horovod = update_times("pytorch-horovod", "nccl");
  const wl::FrameworkConfig f = wl::load_framework("pytorch-horovod");
  const double dispatch_s = f.host.engine_op.value.value + f.host.kernel_launch.value.value;
  const auto updates = static_cast<double>(
      wl::compute_costs(wl::load_workload("resnet-50")).tensors.size());
  EXPECT_LT(ddp.first_update_start - ddp.last_exchange_end, dispatch_s);
  EXPECT_GE(horovod.first_update_start - horovod.last_exchange_end, dispatch_s);
  EXPECT_GE(horovod.last_update_start - horovod.last_exchange_end, updates * dispatch_s);
}

// The update kernels each GPU ran in one iteration of LeNet on 4 GPUs, by track.
std::map<std::string, int> updates_by_gpu(const std::string& framework, const std::string& comm) {
  std::map<std::string, int> updates;
  for (const TimelineEvent& event : one_iteration(framework, "lenet", 4, comm)) {
    if (event.category == "update") ++updates[event.track];
  }
  return updates;
}

TEST(UpdateTiming, MxnetKvstoresUpdateOnTheReducerUnlessEveryGpuUpdates) {
  const int keys = static_cast<int>(wl::compute_costs(wl::load_workload("lenet")).tensors.size());
  const std::string every_gpu = testing::write_temp_file(
      "mxnet-local-updates.yaml",
      "base: mxnet\nname: mxnet-local-updates\nupdate_on_kvstore: false\n");
  for (const char* comm : {"p2p", "nccl_reduce_bcast"}) {
    // update_on_kvstore: each key once, on its reducer (kvstore=nccl: GPU0).
    int on_reducers = 0;
    for (const auto& [track, updates] : updates_by_gpu("mxnet", comm)) on_reducers += updates;
    EXPECT_EQ(on_reducers, keys) << comm;
    // MXNET_UPDATE_ON_KVSTORE=0: every key on every GPU.
    const std::map<std::string, int> local = updates_by_gpu(every_gpu, comm);
    EXPECT_EQ(local.size(), 4u) << comm;
    for (const auto& [track, updates] : local) EXPECT_EQ(updates, keys) << comm << " " << track;
  }
}

TEST(AllreduceGrouping, TheFrameworkFileSaysHowAndFlagsOverrideIt) {
  const wl::FrameworkConfig mxnet = wl::load_framework("mxnet");
  EXPECT_EQ(mxnet.allreduce.grouping, wl::AllreduceGrouping::FusionCycle);
  EXPECT_DOUBLE_EQ(mxnet.allreduce.buffer.value, 64.0 * 1024 * 1024);  // Horovod 0.19.1
  EXPECT_DOUBLE_EQ(mxnet.allreduce.cycle.value, 5e-3);
  const wl::FrameworkConfig ddp = wl::load_framework(framework_with_allreduce("ddp", kBuckets));
  EXPECT_EQ(ddp.allreduce.grouping, wl::AllreduceGrouping::Buckets);
  EXPECT_DOUBLE_EQ(ddp.allreduce.first_bucket.value, 1024.0 * 1024);
  Experiment e;
  e.fusion_mb = 16;
  EXPECT_DOUBLE_EQ(allreduce_of(e, ddp).buffer.value, 16e6);
  Experiment under_mxnet;
  under_mxnet.framework = "mxnet";
  EXPECT_DOUBLE_EQ(allreduce_buffer_mb(under_mxnet), 64.0 * 1024 * 1024 / 1e6);
}

TEST(AllreduceGrouping, ACycleUnderBucketsIsAnErrorNamingTheLine) {
  const std::string path = framework_with_allreduce(
      "buckets-with-cycle", "  grouping: buckets\n  buffer: 25 MiB\n  first_bucket: 1 MiB\n  cycle: 5 ms\n");
  const std::string message = testing::config_error_of([&] { wl::load_framework(path); });
  EXPECT_NE(message.find(path + ":"), std::string::npos) << message;
  EXPECT_NE(message.find("cycle belongs to grouping fusion_cycle"), std::string::npos) << message;
  const std::string unknown = framework_with_allreduce("bad-grouping", "  grouping: rings\n  buffer: 1 MiB\n");
  EXPECT_NE(testing::config_error_of([&] { wl::load_framework(unknown); }).find("grouping"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuscale::sim
