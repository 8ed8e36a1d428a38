// The exchange methods (sim/exchange) asked without a simulation: what each keeps on every GPU
// (closed forms: a reducer's n copies of its keys, GPU0's merged arrays, a fusion buffer or a
// second copy of every gradient per GPU; nothing on one GPU), how outputs describe them, how a
// run's names resolve in a framework (the --comm aliases, --exchange and --algo, the name each
// pair prints as) and the errors of a name a framework cannot run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <numeric>
#include <regex>

#include "sim/exchange/exchange_choice.hpp"
#include "sim/exchange/registry.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::sim {
namespace {

struct Lenet {
  wl::Workload w = wl::load_workload("lenet");
  wl::WorkloadCosts c = wl::compute_costs(w);
  double param_bytes() const { return static_cast<double>(c.params) * 4; }
};

std::unique_ptr<ExchangeMethod> method(const std::string& name, const wl::FrameworkConfig& f,
                                       wl::AllreduceModel allreduce,
                                       wl::ReducerPolicy reducers = wl::ReducerPolicy::Greedy) {
  return make_exchange(resolve_exchange(name, f), f, allreduce, reducers);
}

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(ExchangeBuffers, P2pReducersHoldCopiesOfTheirKeysAndUpdateThem) {
  const Lenet x;
  const wl::FrameworkConfig f = wl::load_framework("mxnet");
  const int n = 8;
  const wl::ExchangeBuffers b = method("p2p", f, f.allreduce)->exchange_buffers(x.c, f.precision_of(x.w), n);
  EXPECT_TRUE(b.optimizer_in_store);  // the reducers update (update_on_kvstore)
  ASSERT_EQ(b.bytes.size(), static_cast<size_t>(n));
  // Every key: merged + n-1 copies + the stored weight + its momentum.
  EXPECT_NEAR(sum(b.bytes), x.param_bytes() * (n + 2), 1e-6 * sum(b.bytes));
  // LeNet's fc1 weight (99% of the bytes) lands on GPU0: GPU0 holds the most.
  for (int g = 1; g < n; ++g) EXPECT_GT(b.bytes[0], b.bytes[static_cast<size_t>(g)]);
}

TEST(ExchangeBuffers, AllOnGpu0PutsEveryKeyOnGpu0) {
  const Lenet x;
  const wl::FrameworkConfig f = wl::load_framework("mxnet");
  const wl::ExchangeBuffers b =
      method("p2p", f, f.allreduce, wl::ReducerPolicy::AllOnGpu0)->exchange_buffers(x.c, f.precision_of(x.w), 4);
  EXPECT_NEAR(b.bytes[0], x.param_bytes() * 6, 1e-6 * b.bytes[0]);
  for (size_t g = 1; g < b.bytes.size(); ++g) EXPECT_DOUBLE_EQ(b.bytes[g], 0);
}

TEST(ExchangeBuffers, KvstoreNcclMergesOnGpu0WithTheWeightsAndStateItUpdates) {
  const Lenet x;
  const wl::FrameworkConfig f = wl::load_framework("mxnet");
  const wl::ExchangeBuffers b =
      method("nccl_reduce_bcast", f, f.allreduce)->exchange_buffers(x.c, f.precision_of(x.w), 4);
  EXPECT_TRUE(b.optimizer_in_store);
  EXPECT_DOUBLE_EQ(b.bytes[0], x.param_bytes() * 3);  // merged, weights, momentum
  for (size_t g = 1; g < b.bytes.size(); ++g) EXPECT_DOUBLE_EQ(b.bytes[g], 0);
}

TEST(ExchangeBuffers, HorovodHoldsItsFusionBufferOnEveryGpu) {
  const Lenet x;
  const wl::FrameworkConfig f = wl::load_framework("mxnet");
  wl::AllreduceModel fusion = f.allreduce;
  fusion.buffer = Bytes{64e6};
  const wl::ExchangeBuffers b = method("nccl", f, fusion)->exchange_buffers(x.c, f.precision_of(x.w), 4);
  EXPECT_FALSE(b.optimizer_in_store);  // each GPU updates its own copy
  EXPECT_EQ(b.bytes, std::vector<double>(4, 64e6));
}

TEST(ExchangeBuffers, DdpBucketsHoldASecondCopyOfEveryGradient) {
  const Lenet x;
  const wl::FrameworkConfig f = wl::load_framework("pytorch-ddp");
  const wl::ExchangeBuffers b = method("nccl", f, f.allreduce)->exchange_buffers(x.c, f.precision_of(x.w), 4);
  EXPECT_EQ(b.bytes, std::vector<double>(4, x.param_bytes()));
}

// The gradients DDP's buckets hold are the recipe's: FP32 under native AMP (autocast keeps the
// parameters FP32), FP16 under apex O2 (an FP16 model): twice the bytes.
TEST(ExchangeBuffers, NativeAmpBucketsHoldTwiceTheBytesOfApexO2) {
  Lenet x;
  const wl::FrameworkConfig f = wl::load_framework("pytorch-ddp");
  wl::set_precision(x.w, "amp", {});
  const auto amp = method("nccl", f, f.allreduce)->exchange_buffers(x.c, f.precision_of(x.w), 4);
  wl::set_precision(x.w, "fp16", {});
  const auto o2 = method("nccl", f, f.allreduce)->exchange_buffers(x.c, f.precision_of(x.w), 4);
  EXPECT_EQ(amp.bytes, std::vector<double>(4, x.param_bytes()));
  EXPECT_EQ(o2.bytes, std::vector<double>(4, x.param_bytes() / 2));
}

// MXNet's --dtype float16 with multi_precision SGD: GPU0 merges FP16 gradients and keeps the FP16
// weight, the FP32 master copy and the FP32 momentum: 2 + 2 + 4 + 4 bytes per parameter.
TEST(ExchangeBuffers, KvstoreNcclUnderFp16KeepsTheMasterWeightsAndFp32Momentum) {
  Lenet x;
  const wl::FrameworkConfig f = wl::load_framework("mxnet");
  wl::set_precision(x.w, "fp16", {});
  const wl::ExchangeBuffers b =
      method("nccl_reduce_bcast", f, f.allreduce)->exchange_buffers(x.c, f.precision_of(x.w), 4);
  EXPECT_DOUBLE_EQ(b.bytes[0], static_cast<double>(x.c.params) * 12);
}

TEST(ExchangeBuffers, OneGpuExchangesNothing) {
  const Lenet x;
  for (const char* framework : {"mxnet", "pytorch-ddp", "pytorch-horovod"}) {
    const wl::FrameworkConfig f = wl::load_framework(framework);
    for (const char* name : {"p2p", "nccl_reduce_bcast", "nccl"}) {
      const wl::ExchangeBuffers b = method(name, f, f.allreduce)->exchange_buffers(x.c, f.precision_of(x.w), 1);
      EXPECT_FALSE(b.optimizer_in_store) << framework << " " << name;
      EXPECT_TRUE(b.bytes.empty()) << framework << " " << name;
    }
  }
}

TEST(ExchangeMethods, DescribeWhatTheyDoAsTheFrameworkGroups) {
  const wl::FrameworkConfig mxnet = wl::load_framework("mxnet");
  EXPECT_EQ(method("p2p", mxnet, mxnet.allreduce)->describe(), "kvstore=device per key");
  EXPECT_EQ(method("nccl_reduce_bcast", mxnet, mxnet.allreduce)->describe(),
            "kvstore=nccl per key");
  EXPECT_EQ(method("nccl", mxnet, mxnet.allreduce)->describe(), "horovod fusion 64 MiB every 5 ms");
  wl::AllreduceModel no_cycle = mxnet.allreduce;
  no_cycle.cycle = Seconds{0};
  EXPECT_EQ(method("nccl", mxnet, no_cycle)->describe(), "horovod fusion 64 MiB with no cycle");
  wl::AllreduceModel unfused = mxnet.allreduce;
  unfused.buffer = Bytes{0};
  EXPECT_EQ(method("nccl", mxnet, unfused)->describe(), "one allreduce per tensor");
  const wl::FrameworkConfig ddp = wl::load_framework("pytorch-ddp");
  EXPECT_EQ(method("nccl_tree", ddp, ddp.allreduce)->describe(), "ddp buckets of 25 MiB");
}

TEST(ExchangeMethods, OnlyMxnetsKvstoresCopyByTheFrameworksOwnRouting) {
  const wl::FrameworkConfig mxnet = wl::load_framework("mxnet");
  EXPECT_EQ(method("p2p", mxnet, mxnet.allreduce)->copy_routing(),
            mxnet.copies_without_peer_access);
  EXPECT_EQ(method("nccl_reduce_bcast", mxnet, mxnet.allreduce)->copy_routing(), std::nullopt);
  EXPECT_EQ(method("nccl", mxnet, mxnet.allreduce)->copy_routing(), std::nullopt);
}

TEST(ExchangeChoice, CommAliasesResolveToTheFrameworksMethodAndKeepTheirNames) {
  const wl::FrameworkConfig mxnet = wl::load_framework("mxnet");
  const wl::FrameworkConfig ddp = wl::load_framework("pytorch-ddp");
  auto expect = [](const ExchangeChoice& c, const char* exchange, const char* algorithm,
                   const char* name) {
    EXPECT_EQ(c.exchange, exchange);
    EXPECT_EQ(c.algorithm, algorithm);
    EXPECT_EQ(c.name, name);
  };
  expect(resolve_exchange("p2p", mxnet), "kvstore_device", "p2p", "p2p");
  expect(resolve_exchange("nccl_reduce_bcast", mxnet), "kvstore_nccl", "nccl_reduce_bcast",
         "nccl_reduce_bcast");
  expect(resolve_exchange("nccl", mxnet), "allreduce", "nccl_ring", "nccl");
  expect(resolve_exchange("rabenseifner", mxnet), "allreduce", "rabenseifner", "rabenseifner");
  // A framework without kvstores runs the same names as allreduces by those algorithms.
  expect(resolve_exchange("p2p", ddp), "allreduce", "p2p", "p2p");
  expect(resolve_exchange("nccl_reduce_bcast", ddp), "allreduce", "nccl_reduce_bcast",
         "nccl_reduce_bcast");
}

TEST(ExchangeChoice, ExchangeAndAlgoPairsPrintAsTheAliasThatMeansThem) {
  const wl::FrameworkConfig mxnet = wl::load_framework("mxnet");
  const wl::FrameworkConfig ddp = wl::load_framework("pytorch-ddp");
  EXPECT_EQ(
      exchange_names({"kvstore_device", "allreduce"}, {"nccl_ring", "nccl_tree"}, {}),
      (std::vector<std::string>{"kvstore_device", "allreduce:nccl_ring", "allreduce:nccl_tree"}));
  EXPECT_EQ(exchange_names({}, {"rabenseifner"}, {}),
            std::vector<std::string>{"allreduce:rabenseifner"});
  EXPECT_EQ(exchange_names({"allreduce"}, {}, {}), std::vector<std::string>{"allreduce:nccl_ring"});
  EXPECT_EQ(resolve_exchange("kvstore_device", mxnet).name, "p2p");
  EXPECT_EQ(resolve_exchange("allreduce:nccl_ring", mxnet).name, "nccl");
  EXPECT_EQ(resolve_exchange("allreduce:nccl_tree", ddp).name, "nccl_tree");
  // Where the alias means a kvstore, the allreduce by the same algorithm keeps its own name.
  EXPECT_EQ(resolve_exchange("allreduce:p2p", mxnet).name, "allreduce:p2p");
  EXPECT_EQ(resolve_exchange("allreduce:p2p", mxnet).exchange, "allreduce");
  EXPECT_EQ(resolve_exchange("allreduce:p2p", ddp).name, "p2p");
}

TEST(ExchangeChoice, NamesAFrameworkCannotRunAreOneLineErrors) {
  const wl::FrameworkConfig ddp = wl::load_framework("pytorch-ddp");
  EXPECT_THAT(testing::config_error_of([&] {
                resolve_exchange("kvstore_device", ddp, {"--exchange", 0});
              }),
              ::testing::StartsWith("--exchange: framework 'pytorch-ddp' has no exchange method "
                                    "'kvstore_device' (it has: allreduce;"));
  EXPECT_THAT(testing::config_error_of([] {
                check_exchange_name("ncl", {"--comm", 0});
              }),
              ::testing::HasSubstr("unknown comm method 'ncl' (did you mean 'nccl'?)"));
  EXPECT_THAT(testing::config_error_of([] {
                check_exchange_name("allreduce:tree", {"--comm", 0});
              }),
              ::testing::HasSubstr("unknown allreduce algorithm 'tree'"));
  EXPECT_THAT(testing::config_error_of([] {
                exchange_names({"kvstore_nccl"}, {"nccl_tree"}, {"--algo", 0});
              }),
              ::testing::HasSubstr("the others run their own"));
}

TEST(ExchangeChoice, AnUnknownMethodInAFrameworkFileIsAnErrorAtItsLine) {
  std::ifstream file(wl::load_framework("mxnet").file);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  text = std::regex_replace(text, std::regex("exchange_methods: \\[kvstore_device,"),
                            "exchange_methods: [kvstore_devce,");
  const std::string path = testing::write_temp_file("mxnet-devce.yaml", text);
  const wl::FrameworkConfig f = wl::load_framework(path);
  const std::string error = testing::config_error_of([&] { resolve_exchange("nccl", f); });
  EXPECT_THAT(error, ::testing::StartsWith(path + ":"));
  EXPECT_THAT(error, ::testing::HasSubstr("unknown exchange method 'kvstore_devce' (did you mean "
                                          "'kvstore_device'?)"));
}

TEST(ExchangeRegistry, EveryMethodIsMadeFromItsEntry) {
  const wl::FrameworkConfig mxnet = wl::load_framework("mxnet");
  for (const ExchangeMethodEntry& entry : exchange_methods()) {
    EXPECT_NO_THROW(resolve_exchange(entry.name, mxnet)) << entry.name;
    EXPECT_FALSE(entry.summary.empty()) << entry.name;
  }
  EXPECT_EQ(exchange_method_names(),
            (std::vector<std::string>{"kvstore_device", "kvstore_nccl", "allreduce"}));
}

}  // namespace
}  // namespace gpuscale::sim
